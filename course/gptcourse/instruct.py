"""Chapter 09's instruction fine-tuning runs: how long to fine-tune on this machine.

The book fine-tunes GPT-2 medium (355M) for two epochs over the 935 training entries, which
takes minutes on a GPU and far too long on two CPU cores. The base model is GPT-2 small when
its weights can be had, else a GPT of chapter 05's small shape with random weights
(instruction_base), and the run depends on it and on the device:

- the small model, on a CPU: every entry, a few epochs at a rate that suits a small model; its
  answers are weak (it starts from nothing), which the notebook says;
- the small model on a GPU: the same model, trained twice as long, cheap there;
- GPT-2 on a GPU: the book's run, two epochs at 5e-5;
- GPT-2 on a CPU: one epoch over the first batches only, and fewer test responses, so that
  the notebook stays within minutes; the notebook says so.

While nbgrader runs the notebook, or when GPTCOURSE_QUICK_RUN is set, every run shrinks to a
few batches and a few responses: a grader learns nothing from minutes of fine-tuning.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .messages import say, wrap_at_words
from .pretrain import QUICK_ENV_VAR
from .runtime import runtime_profile


@dataclass
class InstructionRun:
    name: str
    num_epochs: int
    peak_lr: float  # AdamW's rate after warmup; a cosine decays it to min_lr
    batch_size: int = 8
    weight_decay: float = 0.1
    warmup_fraction: float = 0.1  # of all steps
    min_lr: float = 1e-5
    eval_freq: int = 20  # steps between two loss evaluations
    eval_iter: int = 5  # batches per loss evaluation
    train_batches: int | None = None  # training batches per epoch (None: all of them)
    test_responses: int | None = None  # test entries answered (None: all of them)
    max_new_tokens: int = 64  # the longest response generated
    notes: list = field(default_factory=list)

    def initial_lr(self):
        return self.peak_lr / 100

    def describe(self):
        """A few short lines for the notebook: what the run does, then its notes."""
        subset = (f"the first {self.train_batches} batches of each epoch" if self.train_batches
                  else "every training entry")
        answered = (f"the first {self.test_responses} test entries" if self.test_responses
                    else "every test entry")
        epochs = f"{self.num_epochs} epoch{'s' * (self.num_epochs > 1)}"
        lines = [f"{self.name}:", f"  {epochs} over {subset} in batches of {self.batch_size}",
                 f"  AdamW peak lr {self.peak_lr:g} (warmup, then cosine decay), weight decay {self.weight_decay:g}",
                 f"  responses of up to {self.max_new_tokens} tokens for {answered}"]
        return wrap_at_words("\n".join(lines + self.notes))


def pick_instruction_run(device, base):
    """The fine-tuning run for a base model ("gpt2" or "small") on this device."""
    from .notebook import being_graded

    # Any GPU of gptcourse.runtime.PEAK_FLOPS holds these runs (GPT-2 small, batches of 8):
    # only whether there is one decides.
    on_gpu = runtime_profile(device).is_gpu
    if base == "small" and not on_gpu:
        run = InstructionRun("small model, CPU run", num_epochs=3, peak_lr=1e-3, min_lr=5e-5, eval_freq=30,
                             max_new_tokens=48)
    elif base == "small":
        run = InstructionRun("small model, GPU run", num_epochs=12, peak_lr=1e-3, min_lr=5e-5, eval_freq=40)
    elif on_gpu:
        run = InstructionRun("GPT-2, the book's run", num_epochs=2, peak_lr=5e-5, min_lr=5e-6, eval_freq=5,
                             max_new_tokens=256)
    else:
        run = InstructionRun("GPT-2 on a CPU, a shortened run", num_epochs=1, peak_lr=5e-5, min_lr=5e-6,
                             eval_freq=10, eval_iter=2, train_batches=40, test_responses=10,
                             notes=["GPT-2 takes many minutes per epoch on a CPU: this run fine-tunes on the first "
                                    "batches only, so its answers are weaker than after the book's two epochs"])
    if os.environ.get(QUICK_ENV_VAR) or being_graded():
        why = f"{QUICK_ENV_VAR} is set" if os.environ.get(QUICK_ENV_VAR) else "nbgrader is running this notebook"
        run.num_epochs, run.train_batches, run.eval_freq, run.eval_iter = 1, 10, 5, 2
        run.test_responses, run.max_new_tokens = 5, 24
        run.notes.append(f"quick run: 1 epoch of 10 batches and 5 short responses only,\nbecause {why}")
    return run


def instruction_base(device, GPTModel, load_weights_into_gpt):
    """(model, cfg, base): GPT-2 small with OpenAI's weights when they can be had ("gpt2", as
    gptcourse.finetune.pretrained_base gives it), else a GPT of chapter 05's small shape with
    random weights ("small"), saying so in one line.

    Chapters 07 and 08 pretrain the small GPT on The Verdict first; here that buys nothing. A
    model that has read one short story knows nothing of instructions: on two CPU cores, three
    epochs of fine-tuning took it from a validation loss of 10.0 to 2.51 and its test responses
    to a chrF of 15.6, and took a model with random weights from 11.0 to 2.52 and 14.5, while
    the pretraining cost about a third of the notebook's time."""
    import torch

    from .finetune import gpt2_small_if_at_hand
    from .pretrain import cpu_run

    gpt2 = gpt2_small_if_at_hand(device, GPTModel, load_weights_into_gpt)
    if gpt2 is not None:
        return gpt2
    say("No GPT-2 weights here, so the base model is a GPT of chapter 05's small shape with random "
        "weights (section 5 says why it is not pretrained on The Verdict first, as in chapters 07 and 08).")
    cfg = dict(cpu_run().cfg)
    torch.manual_seed(123)
    return GPTModel(cfg).to(device), cfg, "small"
