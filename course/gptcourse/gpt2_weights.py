"""OpenAI's GPT-2 weights, as Hugging Face publishes them, read without extra packages.

The checkpoint is one ``model.safetensors`` file (548 MB for the 124M model). It comes
through the course's data loader (``gptcourse.data``): public address, sha256 check, cache,
or the mirror folder named by ``GPTCOURSE_DATA_MIRROR``.

The safetensors format is simple enough to read by hand, and reading it by hand shows why it
is safe: 8 bytes giving the length of a JSON header, the header (for every tensor its dtype,
shape and byte range), then the raw numbers. Nothing in the file is ever executed, unlike a
pickle, so a checkpoint from a stranger cannot run code on your machine.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import torch

from . import data
from .messages import say

# The safetensors dtype names and the torch dtypes they stand for.
DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}
_NAMES = {dtype: name for name, dtype in DTYPES.items()}

# GPT-2 "124M" in the course's configuration names: as chapter 04's GPTModel, but with a bias
# in the query, key and value projections (OpenAI trained it that way).
GPT2_124M_CONFIG = {"vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12,
                    "n_layers": 12, "drop_rate": 0.0, "qkv_bias": True}

WEIGHTS_DATASET = "gpt2-124m"


def read_safetensors(path) -> dict[str, torch.Tensor]:
    """Every tensor of a .safetensors file, by name (the "__metadata__" entry is skipped)."""
    raw = Path(path).read_bytes()
    if len(raw) < 8:
        raise ValueError(f"{path} is not a safetensors file: only {len(raw)} bytes")
    (header_size,) = struct.unpack("<Q", raw[:8])  # little-endian unsigned 64-bit integer
    if 8 + header_size > len(raw):
        raise ValueError(f"{path} is not a safetensors file: its header is longer than the file")
    header = json.loads(raw[8:8 + header_size])
    body = memoryview(raw)[8 + header_size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = DTYPES[entry["dtype"]]
        start, end = entry["data_offsets"]
        flat = torch.frombuffer(bytearray(body[start:end]), dtype=dtype) if end > start else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(entry["shape"])
    return tensors


def write_safetensors(tensors: dict[str, torch.Tensor], path) -> None:
    """Write tensors in the safetensors format (the tests make small GPT-2 checkpoints with it)."""
    header, chunks, offset = {}, [], 0
    for name, tensor in tensors.items():
        tensor = tensor.detach().cpu().contiguous()
        chunk = tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        header[name] = {"dtype": _NAMES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(chunk)]}
        chunks.append(chunk)
        offset += len(chunk)
    encoded = json.dumps(header).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)  # the format pads the header to a multiple of 8 bytes
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(encoded)))
        file.write(encoded)
        for chunk in chunks:
            file.write(chunk)


def load_gpt2_state_dict() -> dict[str, torch.Tensor]:
    """The GPT-2 124M checkpoint in the Hugging Face layout: downloaded (548 MB) and checked on
    first use, then read from the cache. Raises when it cannot be had (offline, say)."""
    return read_safetensors(data.fetch(WEIGHTS_DATASET))


def try_load_gpt2_state_dict():
    """load_gpt2_state_dict(), or None with one line saying why (no internet, a mirror without
    the weights): a notebook cell can then do without the real weights (the small model instead). While
    nbgrader runs the notebook nothing is downloaded (548 MB in every student's grading kernel)."""
    from .notebook import being_graded

    if being_graded():
        say("The GPT-2 weights are not loaded while nbgrader runs this notebook: the cells below go on "
            "without them.")
        return None
    try:
        return load_gpt2_state_dict()
    except (data.DownloadError, FileNotFoundError, data.ChecksumError) as error:
        first_line = str(error).splitlines()[0]
        say(f"The GPT-2 weights are not available here, so the cells below go on without them "
            f"({first_line})")
        return None
