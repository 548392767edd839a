"""From the plain training step to a fast one on a GPU, one change at a time.

Chapter 05's last section takes your GPTModel through these changes and times each on the
GPU the notebook runs on; ``benchmarks/gpu_pretrain_bench.py`` does the same for GPT-2 124M
at a context of 1,024 tokens. Each change is a small piece here:

| change | where | why it helps |
|---|---|---|
| TF32 | ``set_tf32`` | float32 matrix products on the tensor cores |
| autocast | ``TrainingStep`` | 16-bit matrix products: faster tensor cores, half the bytes |
| fused AdamW | ``TrainingStep`` | one kernel for the whole optimizer update |
| flash attention | ``flash_attention_class``, ``use_flash_attention`` | attention in one kernel, no T x T weights in memory |
| padded vocabulary | ``PaddedOutputHead``, ``pad_vocabulary`` | matrix sizes that are multiples of 64 |
| torch.compile | ``TrainingStep`` | the small operations fused into a few kernels |
| largest batch | ``largest_batch_that_fits`` | more tokens per step for the same fixed costs |

``speed_ladder(profile)`` lists the changes a card supports, each added to the ones before,
and ``measure_ladder`` times every rung of it on a GPTModel.
"""
from __future__ import annotations

import dataclasses
import gc
import itertools
import math
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .kvcache import rebuilt_attention
from .pretrain import model_flops_per_token
from .runtime import autocast, gpt_parameter_count

VOCAB_MULTIPLE = 64

# Figures recorded on GPUs (docs/benchmarks.md has them with how they were taken), which
# chapter 05 shows on a machine without a GPU: {where and when: {step: (tokens per second,
# MFU)}}, each step adding one change to those above it, as in speed_ladder. Batch 16, and
# for the last step the largest batch tried: 64 in the benchmark, 32 in the notebook.
RECORDED_LADDERS = {
    "NVIDIA H100 80GB HBM3, torch 2.11.0, 2026-11-27: the benchmark, context 1,024": {
        "plain": (36_601, 0.040),
        "+ TF32": (67_385, 0.074),
        "+ bf16 autocast": (71_254, 0.079),
        "+ fused AdamW": (72_378, 0.080),
        "+ flash attention": (118_834, 0.131),
        "+ padded vocabulary": (140_161, 0.155),
        "+ torch.compile": (348_151, 0.384),
        "+ largest batch": (381_894, 0.421),
    },
    "the same H100: section 9's measuring cell, section 8's shape, context 512": {
        "plain": (39_731, 0.041),
        "+ TF32": (75_960, 0.079),
        "+ bf16 autocast": (82_152, 0.086),
        "+ fused AdamW": (84_710, 0.088),
        "+ flash attention": (112_644, 0.118),
        "+ padded vocabulary": (131_987, 0.138),
        "+ torch.compile": (278_808, 0.291),
        "+ largest batch": (354_821, 0.370),
    },
}


# ------------------------------------------------------------------------------------------
# The changes, one by one
# ------------------------------------------------------------------------------------------

def set_tf32(enabled):
    """Let float32 matrix products run on the tensor cores as TF32 (compute capability 8.0
    and later): float32's range with a 10-bit mantissa, enough for training. It is a switch
    for the whole process, off by default in PyTorch."""
    torch.set_float32_matmul_precision("high" if enabled else "highest")


def flash_attention_class(MultiHeadAttention):
    """A subclass of your MultiHeadAttention (chapter 03) that computes the same attention with
    torch.nn.functional.scaled_dot_product_attention and is_causal=True.

    With the same weights it gives the same outputs in eval mode (up to rounding: the sums run
    in another order). On a GPU, PyTorch runs it as one fused kernel (FlashAttention, or the
    memory-efficient kernel on older cards) that never writes the T x T attention weights to
    memory. In train mode it drops attention weights with the same probability as your dropout
    and scales the rest the same way, but it draws its own random numbers: its outputs then
    differ from your class's, and only their distribution is the same.
    """

    class FlashMultiHeadAttention(MultiHeadAttention):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
            # Kept under our own names: your class may name them differently.
            self.flash_num_heads = num_heads
            self.flash_dropout = dropout

        def forward(self, x):
            b, num_tokens, d_out = x.shape[0], x.shape[1], self.out_proj.in_features
            head_dim = d_out // self.flash_num_heads

            def heads(t):  # (b, T, d_out) -> (b, num_heads, T, head_dim)
                return t.view(b, num_tokens, self.flash_num_heads, head_dim).transpose(1, 2)

            queries, keys, values = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
            # Scores scaled by 1 / sqrt(head_dim), causal mask, softmax, dropout, weighted sum:
            # all in one call.
            context = F.scaled_dot_product_attention(queries, keys, values, is_causal=True,
                                                     dropout_p=self.flash_dropout if self.training else 0.0)
            return self.out_proj(context.transpose(1, 2).reshape(b, num_tokens, d_out))

    return FlashMultiHeadAttention


def use_flash_attention(model, cfg, MultiHeadAttention):
    """Give every block of `model` (a GPTModel built from `cfg`) a FlashMultiHeadAttention
    with the weights of its attention; the model is changed in place and returned."""
    flash_class = flash_attention_class(MultiHeadAttention)
    for block in model.trf_blocks:
        block.att = rebuilt_attention(block.att, cfg, flash_class)
    return model


class PaddedOutputHead(nn.Module):
    """An output head with rows added up to a multiple of 64 that returns only the real
    vocabulary's logits.

    GPT-2's 50,257 tokens make a matrix product of an awkward size: GPU kernels work in tiles
    of 64 or 128 rows, and the last, ragged tile costs as much as a full one. The padded head
    computes 50,304 logits, a multiple of 64, and returns the first 50,257: the extra logits
    never leave the head, so they are never sampled and never enter the loss. The extra rows
    start at zero and get zero gradients (nothing uses their logits), so they stay zero.
    """

    def __init__(self, out_head, multiple=VOCAB_MULTIPLE):
        super().__init__()
        if out_head.bias is not None:
            raise ValueError("the course's output head has no bias (bias=False)")
        vocab_size, emb_dim = out_head.weight.shape
        padded = math.ceil(vocab_size / multiple) * multiple
        self.vocab_size = vocab_size
        self.linear = nn.Linear(emb_dim, padded, bias=False, device=out_head.weight.device,
                                dtype=out_head.weight.dtype)
        with torch.no_grad():
            self.linear.weight.zero_()
            self.linear.weight[:vocab_size] = out_head.weight

    def forward(self, x):
        return self.linear(x)[..., :self.vocab_size]


def pad_vocabulary(model, multiple=VOCAB_MULTIPLE):
    """Replace `model.out_head` by a PaddedOutputHead with the same weights; in place."""
    model.out_head = PaddedOutputHead(model.out_head, multiple)
    return model


@dataclass(frozen=True)
class SpeedSettings:
    """Which changes a training step uses; `dataclasses.replace(settings, ...)` adds one."""

    tf32: bool = False
    autocast_dtype: torch.dtype | None = None
    fused_adamw: bool = False
    flash_attention: bool = False
    padded_vocab: bool = False
    compile: bool = False


def prepare_model(GPTModel, cfg, settings, device, MultiHeadAttention=None, seed=123):
    """GPTModel(cfg) with the model changes of `settings`, on `device`. The same seed gives
    the same weights whatever the settings: the changes copy the weights they replace."""
    torch.manual_seed(seed)
    model = GPTModel(cfg)
    if settings.flash_attention:
        use_flash_attention(model, cfg, MultiHeadAttention)
    if settings.padded_vocab:
        pad_vocabulary(model)
    return model.to(device)


class TrainingStep:
    """One AdamW step of `model` under `settings`: call it with (inputs, targets) on the
    model's device; it returns the loss (a tensor, so that the GPU need not wait for it)."""

    def __init__(self, model, settings, device, lr=6e-4, weight_decay=0.1, max_norm=1.0):
        self.model, self.settings, self.device = model, settings, torch.device(device)
        self.max_norm = max_norm  # gradient clipping, as in train_model (Task 5.7)
        fused = {"fused": True} if settings.fused_adamw else {}
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, **fused)
        # fp16's small range needs the loss scaled up before backward (gptcourse.runtime);
        # with any other format the scaler is switched off and each of its calls does nothing.
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=settings.autocast_dtype == torch.float16)
        self.forward = torch.compile(model) if settings.compile else model

    def __call__(self, inputs, targets):
        self.optimizer.zero_grad(set_to_none=True)
        with autocast(self.device, self.settings.autocast_dtype):
            logits = self.forward(inputs)
            loss = next_token_loss(logits, targets)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)  # clip the true gradients, not the scaled ones
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=self.max_norm)
        self.scaler.step(self.optimizer)  # skipped when a scaled gradient overflowed
        self.scaler.update()
        return loss.detach()


def next_token_loss(logits, targets):
    """The mean cross-entropy of every position's next-token logits against its target (the
    loss of Task 5.2): logits (batch, tokens, vocab), targets (batch, tokens)."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def largest_batch_that_fits(fits, start, limit):
    """The largest batch size start * 2**k (at most `limit`) for which fits(batch) is True,
    trying the doublings of `start` in turn until one does not fit."""
    batch = start
    while batch * 2 <= limit and fits(batch * 2):
        batch *= 2
    return batch


def step_fits(step, batch_size, context_length, vocab_size, device):
    """True when one step at this batch size runs without running out of GPU memory."""
    try:
        inputs, targets = random_batch(batch_size, context_length, vocab_size, device)
        step(inputs, targets)
        synchronize(device)
        return True
    except RuntimeError as error:  # torch.OutOfMemoryError, or a compiler's error that wraps one
        if "out of memory" not in str(error).lower():
            raise
        return False
    finally:
        free_memory(device)


# ------------------------------------------------------------------------------------------
# The ladder: every change the card supports, each added to the ones before, timed
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rung:
    name: str
    why: str
    settings: SpeedSettings
    largest_batch: bool = False  # this rung searches the largest batch that fits


def speed_ladder(profile):
    """The rungs for a card (a gptcourse.runtime.RuntimeProfile), from the plain step on: a
    change the card lacks (TF32 on a T4, say) is left out."""
    changes = [  # (the card has it, name, why it helps, the change to the settings)
        (profile.tf32, "+ TF32", "float32 matrix products on the tensor cores (10-bit mantissa, float32's "
                                 "range): several times float32's rate", {"tf32": True}),
        (profile.autocast_dtype is torch.bfloat16, "+ bf16 autocast",
         "matrix products in bfloat16: twice TF32's tensor-core rate and half the bytes to move; the weights "
         "stay float32", {"autocast_dtype": torch.bfloat16}),
        (profile.autocast_dtype is torch.float16, "+ fp16 autocast",
         "matrix products in float16 on the tensor cores, with a gradient scaler against underflow; the "
         "weights stay float32", {"autocast_dtype": torch.float16}),
        (profile.fused_adamw, "+ fused AdamW", "one kernel updates every parameter, instead of a few kernels "
                                               "per tensor", {"fused_adamw": True}),
        (True, "+ flash attention", "scaled_dot_product_attention: attention in one kernel that never writes "
                                    "the T x T weights to memory", {"flash_attention": True}),
        (True, "+ padded vocabulary", "50,304 logits, a multiple of 64, of which the first 50,257 are used: "
                                      "matrix sizes the tensor-core kernels tile evenly", {"padded_vocab": True}),
        (profile.compile, "+ torch.compile", "LayerNorm, GELU, additions and the loss fused into a few kernels: "
                                             "fewer trips through memory and fewer kernel launches", {"compile": True}),
    ]
    settings = SpeedSettings()
    rungs = [Rung("plain", "float32 everywhere, AdamW as it comes, your attention, 50,257 logits: the starting "
                           "point", settings)]
    for available, name, why, change in changes:
        if available:
            settings = dataclasses.replace(settings, **change)
            rungs.append(Rung(name, why, settings))
    rungs.append(Rung("+ largest batch", "as many sequences per step as fit: larger matrix products, and the "
                                         "per-step costs shared by more tokens", settings, largest_batch=True))
    return rungs


@dataclass
class RungResult:
    rung: Rung
    batch_size: int
    seconds_per_step: float
    tokens_per_second: float
    mfu: float | None  # share of the card's peak (profile.peak), None without one
    peak_memory_gib: float | None  # on a GPU


def measure_ladder(GPTModel, MultiHeadAttention, cfg, profile, device, batch_size, warmup=3, steps=10,
                   max_batch=None, rungs=None, on_rung=None):
    """Time every rung of speed_ladder(profile) (or `rungs`) on GPTModel(cfg): `warmup`
    untimed steps (torch.compile compiles in them), then `steps` timed ones, on random token
    ids. The largest-batch rung doubles the batch up to `max_batch` (default 4 x batch_size)
    while a step fits. on_rung(result) is called after each rung. Returns the RungResults.

    MFU counts the plain model's FLOPs for every rung: padding adds work that is thrown away.
    """
    device = torch.device(device)
    flops_per_token = model_flops_per_token(cfg, gpt_parameter_count(cfg))
    results = []
    for rung in rungs or speed_ladder(profile):
        set_tf32(rung.settings.tf32)
        model = prepare_model(GPTModel, cfg, rung.settings, device, MultiHeadAttention)
        step = TrainingStep(model, rung.settings, device)
        batch = batch_size
        if rung.largest_batch:
            def fits(b):
                return step_fits(step, b, cfg["context_length"], cfg["vocab_size"], device)
            batch = largest_batch_that_fits(fits, batch_size, max_batch or 4 * batch_size)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        batches = [random_batch(batch, cfg["context_length"], cfg["vocab_size"], device, seed=i) for i in range(2)]
        seconds = time_steps(step, batches, warmup, steps, device)
        tokens_per_second = batch * cfg["context_length"] / seconds
        peak = profile.peak
        result = RungResult(rung, batch, seconds, tokens_per_second,
                            tokens_per_second * flops_per_token / peak.flops if peak else None,
                            torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None)
        results.append(result)
        if on_rung is not None:
            on_rung(result)
        del model, step, batches
        free_memory(device)
    set_tf32(False)
    return results


def compare_losses(GPTModel, MultiHeadAttention, cfg, plain, fast, device, batch_size, steps=10):
    """The losses of the first `steps` training steps under the settings `plain` and `fast`,
    from the same weights on the same batches: (plain_losses, fast_losses), lists of floats."""
    batches = [random_batch(batch_size, cfg["context_length"], cfg["vocab_size"], device, seed=i) for i in range(4)]
    losses = []
    for settings in (plain, fast):
        set_tf32(settings.tf32)
        model = prepare_model(GPTModel, cfg, settings, device, MultiHeadAttention)
        step = TrainingStep(model, settings, device)
        losses.append([step(*batches[i % len(batches)]).item() for i in range(steps)])
        del model, step
        free_memory(device)
    set_tf32(False)
    return losses[0], losses[1]


def format_ladder(results):
    """The ladder's results as a table of text: one row per rung."""
    lines = [f"{'step':<22}{'batch':>6}{'ms/step':>10}{'tokens/s':>12}{'speed-up':>10}{'MFU':>8}{'memory':>10}"]
    base = results[0].tokens_per_second
    for r in results:
        mfu = f"{r.mfu:.1%}" if r.mfu is not None else "-"
        memory = f"{r.peak_memory_gib:.1f} GiB" if r.peak_memory_gib is not None else "-"
        lines.append(f"{r.rung.name:<22}{r.batch_size:>6}{1e3 * r.seconds_per_step:>10.1f}"
                     f"{r.tokens_per_second:>12,.0f}{r.tokens_per_second / base:>9.2f}x{mfu:>8}{memory:>10}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Small helpers
# ------------------------------------------------------------------------------------------

def random_batch(batch_size, context_length, vocab_size, device, seed=0):
    """Inputs and targets of random token ids (speed does not depend on the text), seeded."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (batch_size, context_length + 1), generator=generator)
    ids = ids.to(device)
    return ids[:, :-1], ids[:, 1:]


def time_steps(step, batches, warmup, steps, device):
    """Seconds per step over `steps` steps, after `warmup` untimed ones, cycling over `batches`."""
    cycle = itertools.cycle(batches)
    for inputs, targets in itertools.islice(cycle, warmup):
        step(inputs, targets)
    synchronize(device)
    started = time.perf_counter()
    for inputs, targets in itertools.islice(cycle, steps):
        step(inputs, targets)
    synchronize(device)  # the GPU runs behind the Python code: wait for its last step
    return (time.perf_counter() - started) / steps


def synchronize(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def free_memory(device):
    """Give the memory of dropped models and batches back, so the next rung starts afresh."""
    gc.collect()
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()
