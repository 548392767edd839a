"""Which pretraining run a notebook does on this machine, and how fast it goes.

Chapter 05 trains a GPT in the notebook itself. On 2 CPU cores the run has to be small to
finish in a couple of minutes; on a GPU the same notebook trains the GPT-2 124M shape on a
larger text. ``pick_run(device)`` makes that choice, so the notebook never has to ask.

``model_flops_per_token`` and ``mfu`` say how well a run uses the hardware: model FLOPs
utilisation is the share of the accelerator's peak arithmetic that the model's own
matrix multiplications account for (PaLM paper, appendix B).

What the GPU can do (number format, torch.compile, memory) is decided in one place,
``gptcourse.runtime.runtime_profile``; this module sizes chapter 05's run from it.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import torch

from .messages import wrap_at_words
from .runtime import FORMAT_NAMES, autocast, runtime_profile


@dataclass
class PretrainRun:
    """Everything that decides a pretraining run."""

    name: str
    data: str  # a data set name of gptcourse.data
    cfg: dict  # the GPTModel configuration
    batch_size: int
    num_epochs: int
    peak_lr: float
    initial_lr: float
    min_lr: float
    warmup_fraction: float  # of all steps
    weight_decay: float = 0.1
    eval_freq: int = 20
    eval_iter: int = 2
    autocast_dtype: torch.dtype | None = None  # bf16 on a recent GPU: half the memory traffic, tensor cores
    fused_adamw: bool = False  # one kernel for the whole optimizer step (CUDA only)
    compile: bool = False  # torch.compile: fuses the small operations of each block
    notes: list = field(default_factory=list)

    def warmup_steps(self, steps_per_epoch):
        return max(1, int(self.warmup_fraction * steps_per_epoch * self.num_epochs))

    def autocast(self, device):
        """The context to train in: autocast on a GPU run that has a fast format, nothing on the CPU."""
        return autocast(device, self.autocast_dtype)

    def describe(self):
        """A few short lines for the notebook: the model, the run, the speed-ups, the notes."""
        cfg = self.cfg
        lines = [f"{self.name}: {cfg['n_layers']} blocks, emb_dim {cfg['emb_dim']}, {cfg['n_heads']} heads, "
                 f"context {cfg['context_length']}, dropout {cfg['drop_rate']}",
                 f"on {self.data}, batch {self.batch_size}, {self.num_epochs} epochs, AdamW peak lr {self.peak_lr:g}",
                 f"with {self.warmup_fraction:.0%} warmup and cosine decay to {self.min_lr:g}"]
        extras = [text for flag, text in ((self.autocast_dtype is not None, FORMAT_NAMES[self.autocast_dtype]),
                                          (self.fused_adamw, "fused AdamW"), (self.compile, "torch.compile"))
                  if flag]
        if extras:
            lines.append("speed-ups: " + ", ".join(extras))
        return wrap_at_words("\n".join(lines + self.notes))


def cpu_run():
    """The CPU run: small enough for 2 cores, big enough to memorise the-verdict.

    The output head (emb_dim x 50,257) and its AdamW state cost the same whatever the model's
    depth, so the model is narrow (emb_dim 128) and shallow (4 blocks). A short context and a
    batch of 2 give many small steps per epoch; a high peak rate (4e-3, fine for a model this
    small) after a short warmup, decaying along a cosine, and no dropout (the aim is to fit
    this one text) bring the training loss below 1 in about 160 steps.
    """
    cfg = {"vocab_size": 50257, "context_length": 128, "emb_dim": 128, "n_heads": 4, "n_layers": 4,
           "drop_rate": 0.0, "qkv_bias": False}
    return PretrainRun("CPU run", "the-verdict", cfg, batch_size=2, num_epochs=12, peak_lr=4e-3, initial_lr=4e-5,
                       min_lr=4e-5, warmup_fraction=0.1, eval_freq=18, eval_iter=2)


def gpu_run(device, profile=None):
    """The GPU run: the GPT-2 124M shape on tinyshakespeare, with what the card offers
    (gptcourse.runtime.runtime_profile): bf16 autocast where the card has bf16 tensor cores,
    fused AdamW, torch.compile where it pays, and a batch of 16, or as large as the card's
    memory holds. A card too small for GPT-2's shape trains the CPU run instead."""
    profile = profile or runtime_profile(device)
    cfg = {"vocab_size": 50257, "context_length": 512, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
           "drop_rate": 0.1, "qkv_bias": False}
    notes = [f"device: {profile.describe()}".replace("\n", "\n  ")]
    # Your train_model calls loss.backward() and optimizer.step() itself, with no place for a
    # gradient scaler, and fp16 training needs one: where fp16 is the card's fast format (a
    # T4), the run trains in float32. Chapter 05's last section trains with fp16 and a scaler.
    autocast_dtype = None if profile.grad_scaler else profile.autocast_dtype
    if profile.grad_scaler:
        notes.append("this run: float32, since fp16 needs a gradient scaler that train_model does not have")
    batch_size = profile.largest_batch(cfg, half_precision=autocast_dtype is not None)
    if batch_size is None:
        run = cpu_run()
        run.notes.append(f"{profile.name}'s memory is too small for GPT-2's shape: training the CPU run on it")
        return run
    if batch_size < 16:
        notes.append(f"batch {batch_size} instead of 16: the most this card's memory holds, by "
                     f"gptcourse.runtime.training_memory_bytes")
    return PretrainRun("GPU run", "tinyshakespeare", cfg, batch_size=batch_size, num_epochs=3, peak_lr=6e-4,
                       initial_lr=6e-6, min_lr=6e-5, warmup_fraction=0.05, eval_freq=50, eval_iter=5,
                       autocast_dtype=autocast_dtype, fused_adamw=profile.fused_adamw, compile=profile.compile,
                       notes=notes)


# Set (to anything but "") by the course's tests that run a notebook only to see that it runs
# (the workshop edition, nbgrader's run of a complete student notebook): one epoch instead of
# the full run. The masters test runs the full run but in chapters 08 and 09.
QUICK_ENV_VAR = "GPTCOURSE_QUICK_RUN"


def pick_run(device, small=False):
    """The run for this device: the GPU run on CUDA, the CPU run anywhere else, or the CPU run
    everywhere with ``small=True`` (chapter 06 wants a model that knows *The Verdict*; on a GPU
    it trains in seconds). One epoch only when GPTCOURSE_QUICK_RUN is set, or while nbgrader
    runs the notebook (a grader learns nothing from minutes of training, and a class's
    autograde run stays short)."""
    from .notebook import being_graded

    if small:
        run = cpu_run()
    else:
        profile = runtime_profile(device)
        run = gpu_run(device, profile) if profile.is_gpu else cpu_run()
    if os.environ.get(QUICK_ENV_VAR) or being_graded():
        why = f"{QUICK_ENV_VAR} is set" if os.environ.get(QUICK_ENV_VAR) else "nbgrader is running this notebook"
        run.num_epochs = 1
        run.notes.append(f"quick run: 1 epoch only, because {why}")
    return run


def make_optimizer(model, run):
    """AdamW with the run's peak rate and weight decay (fused into one kernel where asked)."""
    options = {"fused": True} if run.fused_adamw else {}
    return torch.optim.AdamW(model.parameters(), lr=run.peak_lr, weight_decay=run.weight_decay, **options)


# ------------------------------------------------------------------------------------------
# How well a run uses the hardware
# ------------------------------------------------------------------------------------------

def count_parameters(model):
    return sum(p.numel() for p in model.parameters())


def count_trainable(model):
    """The parameters that training changes: those that get a gradient (requires_grad)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def model_flops_per_token(cfg, num_parameters):
    """Training FLOPs per token: 6 per parameter (forward 2, backward 4) plus attention's
    scores and weighted sums, 12 * n_layers * context_length * emb_dim."""
    return 6 * num_parameters + 12 * cfg["n_layers"] * cfg["context_length"] * cfg["emb_dim"]


def peak_flops(device):
    """The GPU's peak dense tensor-core FLOP/s (bf16, or fp16 on a 7.x card: see
    gptcourse.runtime.PEAK_FLOPS), or None when it is not in the table (or a CPU)."""
    peak = runtime_profile(device).peak
    return None if peak is None else peak.flops


def mfu(tokens_per_second, cfg, num_parameters, device):
    """Model FLOPs utilisation, 0..1, or None where the peak is unknown."""
    peak = peak_flops(device)
    return None if not peak else tokens_per_second * model_flops_per_token(cfg, num_parameters) / peak


# ------------------------------------------------------------------------------------------
# A progress bar for a training loop you wrote yourself
# ------------------------------------------------------------------------------------------

class TrainingProgress:
    """A data loader that moves one progress bar forward for every training batch it hands out.

    Pass it to your training function in place of the training loader: it has the loader's
    length and batches. The same loader is also read while evaluating (inside torch.no_grad());
    those batches do not move the bar, so it counts training steps only, across all epochs.
    """

    def __init__(self, loader, num_epochs, desc="training"):
        from gptcourse.progress import progress_bar

        self.loader = loader
        self.bar = progress_bar(total=len(loader) * num_epochs, desc=desc, unit="step")
        self.step_started = []  # time.perf_counter() when each training step got its batch

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for batch in self.loader:
            if torch.is_grad_enabled():  # a training step, not an evaluation
                self.bar.update(1)
                self.step_started.append(time.perf_counter())
            yield batch

    def seconds_since_step(self, step, now=None):
        """Seconds from the start of training step `step` (0-based, over all epochs) to `now`
        (a time.perf_counter() value; default: now), or None when there was no such step. With
        `now` taken when training ended, this times the steps from `step` on alone, without the
        one-time costs of the first steps (torch.compile compiles the model in them)."""
        if not 0 <= step < len(self.step_started):
            return None
        return (time.perf_counter() if now is None else now) - self.step_started[step]

    def close(self):
        self.bar.close()
