"""Choose where tensors live and models run: an NVIDIA GPU ("cuda"), an Apple GPU ("mps")
or the CPU.

All course code is written for any device: create tensors with ``device=...`` or move them
with ``.to(device)``, and the same notebook runs on a laptop and on a GPU runtime.
"""

from __future__ import annotations

import os

import torch

DEVICE_ENV_VAR = "GPTCOURSE_DEVICE"
KNOWN_DEVICE_TYPES = ("cuda", "mps", "cpu")


def get_device(prefer: str | None = None) -> torch.device:
    """Return the device to compute on.

    The environment variable ``GPTCOURSE_DEVICE`` wins (an instructor or grader can force
    a device without editing notebooks), then ``prefer``; both accept "cuda", "cuda:1",
    "mps" or "cpu", and asking for a device that this machine lacks is an error.
    Without either, the fastest available: cuda, then mps, then cpu.
    """
    requested = os.environ.get(DEVICE_ENV_VAR) or prefer
    if requested:
        return _checked_device(requested)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_is_available():
        return torch.device("mps")
    return torch.device("cpu")


def describe_device(device: torch.device | str) -> str:
    """A short human-readable description, e.g. "cuda (NVIDIA H100 80GB HBM3, 79 GiB)"."""
    device = torch.device(device)
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        properties = torch.cuda.get_device_properties(index)
        memory_gib = properties.total_memory / 2**30
        return f"{device} ({properties.name}, {memory_gib:.0f} GiB)"
    if device.type == "mps":
        return f"{device} (Apple GPU)"
    if device.type == "cpu":
        return f"{device} ({torch.get_num_threads()} threads)"
    return str(device)


def _checked_device(requested: str) -> torch.device:
    """Turn "cuda", "cuda:1", "mps" or "cpu" into a torch.device, if this machine has it."""
    try:
        device = torch.device(requested.strip().lower())
    except RuntimeError:  # torch does not know the name at all, e.g. "gpu"
        device = None
    if device is None or device.type not in KNOWN_DEVICE_TYPES:
        raise ValueError(
            f"Unknown device {requested!r}; use one of {', '.join(KNOWN_DEVICE_TYPES)}."
        )
    if device.type == "cuda":
        _require_cuda(device, requested)
    if device.type == "mps" and not _mps_is_available():
        raise RuntimeError(
            f"Device {requested!r} was requested, but this machine has no usable Apple GPU "
            f"(torch.backends.mps.is_available() is False). {_how_to_choose()}"
        )
    return device


def _require_cuda(device: torch.device, requested: str) -> None:
    if not torch.cuda.is_available():
        raise RuntimeError(
            f"Device {requested!r} was requested, but PyTorch sees no CUDA GPU "
            "(torch.cuda.is_available() is False). In Colab, pick a GPU under "
            f"Runtime > Change runtime type. {_how_to_choose()}"
        )
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise RuntimeError(
            f"Device {requested!r} was requested, but this machine has only {count} "
            f"CUDA GPU(s) (cuda:0 to cuda:{count - 1})."
        )


def _how_to_choose() -> str:
    return (
        f"Ask for another device, or unset {DEVICE_ENV_VAR} "
        "to pick the best available one automatically."
    )


def _mps_is_available() -> bool:
    # torch.backends.mps exists in every recent PyTorch, but stay safe on old ones.
    mps = getattr(torch.backends, "mps", None)
    return mps is not None and mps.is_available()
