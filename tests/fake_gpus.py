"""The GPUs students get (Colab: T4, L4, A100) and the clouds' (A10G, H100, H200), as torch
reports them: name, compute capability, total memory in bytes. Tests on a CPU pretend to
have one of them, to check what the course decides there."""
from gptcourse import runtime
from gptcourse.runtime import GPUProperties

GIB = 2**30

CARDS = {
    "T4": GPUProperties("Tesla T4", (7, 5), int(14.7 * GIB)),  # Colab's free GPU: 15 GB, 14.7 GiB usable
    "L4": GPUProperties("NVIDIA L4", (8, 9), int(22.0 * GIB)),
    "A10G": GPUProperties("NVIDIA A10G", (8, 6), int(22.2 * GIB)),
    "A100": GPUProperties("NVIDIA A100-SXM4-40GB", (8, 0), int(39.4 * GIB)),
    "H100": GPUProperties("NVIDIA H100 80GB HBM3", (9, 0), int(79.2 * GIB)),
    "H200": GPUProperties("NVIDIA H200", (9, 0), int(139.8 * GIB)),
}


def pretend_gpu(monkeypatch, card, triton=True):
    """From here on, runtime_profile("cuda") sees `card` (a key of CARDS or GPUProperties),
    with Triton installed or not."""
    properties = CARDS[card] if isinstance(card, str) else card
    monkeypatch.setattr(runtime, "gpu_properties", lambda device: properties)
    monkeypatch.setattr(runtime, "_triton_available", lambda: triton)
    return properties
