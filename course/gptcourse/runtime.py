"""What the device a notebook runs on can do, and how the course uses it.

One function, ``runtime_profile(device)``, makes every choice that depends on the hardware:
the number format to train in, whether ``torch.compile`` is worth it, and how large a run
the card's memory holds. Chapters 05 to 09 ask it instead of deciding for themselves, so a T4
on Colab, an A100 and a laptop's CPU each get settings that work there, and the notebooks
print which (``profile.describe()``).

Why the number format depends on the GPU's generation (its *compute capability*):

- **8.0 and later** (A100, A10G, L4, H100, H200): tensor cores for bfloat16. bf16 has
  float32's range (8 exponent bits) and fewer digits, so autocast to bf16 needs nothing else.
  These cards also have TF32: float32 matrix products on the tensor cores.
- **7.x** (V100 7.0, T4 7.5): tensor cores for float16 only. float16 has 5 exponent bits:
  numbers below about 6e-8 become 0, and small gradients do. Training in it needs a gradient
  scaler (``torch.amp.GradScaler``): it multiplies the loss before ``backward()`` so the
  gradients stay in range, and divides them again before the optimizer step. Recent PyTorch
  answers ``torch.cuda.is_bf16_supported()`` with True on a T4, but there bf16 is emulated,
  slower than float32: the profile never asks that question.
- **anything else** (older GPUs, Apple GPUs, the CPU): float32.
"""
from __future__ import annotations

import contextlib
import importlib.util
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import torch


class Peak(NamedTuple):
    """A GPU's peak dense tensor-core throughput (FLOP/s) and the number format it is for."""

    flops: float
    dtype: str


# Peak throughput without sparsity, from NVIDIA's data sheets (they print the sparse figure,
# twice these, with an asterisk). Each card's number is for the format the profile trains
# in there: bf16 on 8.0 and later, fp16 on 7.x. A card is found by the words of its name
# (torch.cuda.get_device_name), longest key first: "NVIDIA H100 PCIe" is not an H100 SXM.
PEAK_FLOPS = {
    "H100 PCIe": Peak(756e12, "bf16"),  # H100 PCIe data sheet: 1,513 TFLOPS bf16 with sparsity
    "H100": Peak(989e12, "bf16"),  # H100 SXM: 1,979 with sparsity
    "H200": Peak(989e12, "bf16"),  # H200 SXM: 1,979 with sparsity
    "A100": Peak(312e12, "bf16"),  # A100 (40 and 80 GB, SXM and PCIe): 624 with sparsity
    # NVIDIA publishes no data sheet for the A10G (AWS's version of the A10, the same GA102
    # chip): this is the A10's, 250 with sparsity. Some sources give the A10G less; read its
    # MFU as approximate.
    "A10G": Peak(125e12, "bf16"),
    "L4": Peak(121e12, "bf16"),  # L4 data sheet: 242 with sparsity
    "T4": Peak(65e12, "fp16"),  # T4 data sheet: 65 TFLOPS mixed precision (fp16); no sparsity
    "V100": Peak(125e12, "fp16"),  # V100 SXM2 data sheet: 125 TFLOPS tensor performance
}

# How the course names a number format to train in (an autocast dtype, or None).
FORMAT_NAMES = {None: "float32", torch.bfloat16: "bf16 autocast", torch.float16: "fp16 autocast"}

# A run is sized so that its estimated memory stays below this share of the card's: the CUDA
# context, the allocator's fragmentation and the estimate's own error need the rest.
MEMORY_SHARE = 0.8


@dataclass(frozen=True)
class GPUProperties:
    """What the profile reads from a GPU (tests pass made-up ones for cards they do not have)."""

    name: str
    capability: tuple  # (major, minor), e.g. (7, 5) for a T4
    total_memory: int  # bytes


def gpu_properties(device) -> GPUProperties:
    """The name, compute capability and memory of a CUDA device."""
    properties = torch.cuda.get_device_properties(torch.device(device))
    return GPUProperties(properties.name, (properties.major, properties.minor), properties.total_memory)


def card_of(name):
    """The PEAK_FLOPS key a GPU's name belongs to ("Tesla T4" -> "T4"), or None."""
    words = set(re.split(r"[\s\-_]+", name.upper()))
    for key in sorted(PEAK_FLOPS, key=len, reverse=True):
        if all(word.upper() in words for word in key.split()):
            return key
    return None


@dataclass
class RuntimeProfile:
    """Everything the course decides from the device. Build it with ``runtime_profile(device)``."""

    device_type: str  # "cuda", "mps" or "cpu"
    name: str
    capability: tuple | None = None
    total_memory: int | None = None  # bytes; None where torch cannot say (CPU, Apple GPU)
    autocast_dtype: torch.dtype | None = None  # None: train in float32
    grad_scaler: bool = False  # True with float16: the loss must be scaled (see the module's text)
    tf32: bool = False  # float32 matrix products on the tensor cores
    fused_adamw: bool = False  # the whole AdamW update in one kernel
    compile: bool = False  # torch.compile pays off here
    notes: list = field(default_factory=list)

    @property
    def is_gpu(self):
        return self.device_type == "cuda"

    @property
    def card(self):
        return card_of(self.name) if self.is_gpu else None

    @property
    def peak(self):
        """Peak(flops, dtype) of this card, or None (a CPU, or a GPU not in PEAK_FLOPS)."""
        return PEAK_FLOPS.get(self.card)

    def largest_batch(self, cfg, half_precision, flash_attention=False, candidates=(16, 8, 4, 2)):
        """The largest of `candidates` whose training step of GPTModel(cfg) is estimated to fit
        in MEMORY_SHARE of the card's memory (training_memory_bytes); None when none fits or
        the memory is unknown."""
        if self.total_memory is None:
            return None
        budget = MEMORY_SHARE * self.total_memory
        fitting = [b for b in candidates if training_memory_bytes(cfg, b, half_precision, flash_attention) <= budget]
        return max(fitting, default=None)

    def describe(self):
        """A few lines for a notebook: the device and what the course does on it."""
        where = self.name
        if self.is_gpu:
            memory = f"{self.total_memory / 2**30:.0f} GiB, " if self.total_memory else ""
            where += f" ({memory}compute capability {self.capability[0]}.{self.capability[1]})"
        head = f"{where}: {FORMAT_NAMES[self.autocast_dtype]}" + (" with a gradient scaler" if self.grad_scaler else "")
        extras = [text for flag, text in ((self.tf32, "TF32"), (self.fused_adamw, "fused AdamW"),
                                          (self.compile, "torch.compile")) if flag]
        head += "".join(f", {text}" for text in extras)
        if self.peak:
            head += f"; peak {self.peak.flops / 1e12:,.0f} TFLOP/s ({self.peak.dtype}, dense)"
        return "\n".join([head] + self.notes)


def autocast(device, dtype):
    """The context to compute the forward pass and the loss in: autocast to `dtype` (bf16 or
    fp16: matrix products in 16 bits, the weights stay float32), or nothing for None."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=dtype)


def runtime_profile(device, properties=None):
    """The profile of `device` ("cuda", "cuda:1", "mps", "cpu" or a torch.device). For a CUDA
    device its properties are read from torch, unless `properties` (a GPUProperties) is given."""
    device = torch.device(device)
    if device.type != "cuda":
        return RuntimeProfile(device.type, "CPU" if device.type == "cpu" else "Apple GPU",
                              notes=[f"on {device.type} the course trains in float32 and does not compile: "
                                     "its runs there are small, and compiling would take longer than they do"])
    properties = properties or gpu_properties(device)
    profile = RuntimeProfile("cuda", properties.name, tuple(properties.capability), properties.total_memory,
                             fused_adamw=True)
    if profile.capability >= (8, 0):
        profile.autocast_dtype, profile.tf32 = torch.bfloat16, True
    elif profile.capability >= (7, 0):
        profile.autocast_dtype, profile.grad_scaler = torch.float16, True
        profile.notes.append("no bf16 tensor cores on this card (compute capability below 8.0): fp16, whose small "
                             "range needs a gradient scaler")
    else:
        profile.notes.append("no tensor cores for bf16 or fp16 on this card: float32")
    # torch.compile fuses the many small operations around the matrix products; where those
    # are fast (bf16 tensor cores) the rest is most of the time, and compiling pays. On 7.x
    # cards compiling GPT-2 takes minutes on Colab's two CPU cores, more than it saves in a
    # notebook's run. It needs Triton, its GPU compiler.
    profile.compile = profile.capability >= (8, 0) and _triton_available()
    if profile.capability >= (8, 0) and not profile.compile:
        profile.notes.append("torch.compile is not available here (no Triton): running eagerly")
    if profile.peak is None:
        profile.notes.append(f"{properties.name} is not in gptcourse.runtime.PEAK_FLOPS: no MFU figure")
    return profile


def _triton_available():
    return importlib.util.find_spec("triton") is not None


# ------------------------------------------------------------------------------------------
# How much memory a training step of a GPTModel takes: an estimate, to choose a run's size
# ------------------------------------------------------------------------------------------

def gpt_parameter_count(cfg):
    """The parameters of the course's GPTModel(cfg), counted from its layers (a separate
    output head, as in chapter 04)."""
    emb, vocab = cfg["emb_dim"], cfg["vocab_size"]
    attention = 3 * emb * emb + (3 * emb if cfg["qkv_bias"] else 0) + emb * emb + emb  # W_q, W_k, W_v, out_proj
    feed_forward = emb * 4 * emb + 4 * emb + 4 * emb * emb + emb
    layer_norms = 2 * 2 * emb  # scale and shift, twice per block
    block = attention + feed_forward + layer_norms
    return vocab * emb + cfg["context_length"] * emb + cfg["n_layers"] * block + 2 * emb + emb * vocab


def training_memory_bytes(cfg, batch_size, half_precision=True, flash_attention=False):
    """A rough estimate of the GPU memory a training step of GPTModel(cfg) takes, in bytes.

    - weights, gradients and AdamW's two running averages: 4 float32 numbers per parameter;
    - what the forward pass keeps for the backward pass, per token and block: about 17 vectors
      of emb_dim numbers (inputs of the layers, LayerNorm and GELU outputs, dropout masks), and,
      unless flash attention computes it on the fly, 2.5 numbers per head and key position for
      the attention weights (scores, softmax, dropout); after Korthikanti et al. (2022),
      "Reducing Activation Recomputation in Large Transformer Models", table 2;
    - the logits and what cross_entropy keeps of them: the logits, their float32 log-softmax,
      and its gradient.
    Numbers the forward pass keeps are 2 bytes under autocast (half_precision), else 4.
    """
    tokens = batch_size * cfg["context_length"]
    number = 2 if half_precision else 4
    weights_and_optimizer = 16 * gpt_parameter_count(cfg)
    attention_weights = 0 if flash_attention else 2.5 * cfg["n_heads"] * cfg["context_length"]
    activations = tokens * cfg["n_layers"] * (17 * cfg["emb_dim"] + attention_weights) * number
    logits = tokens * cfg["vocab_size"] * (number + 4 + 4)
    return int(weights_and_optimizer + activations + logits)
