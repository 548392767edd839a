"""Chapter 09's instruction fine-tuning runs: how long to fine-tune on this machine.

The book fine-tunes GPT-2 medium (355M) for two epochs over the 935 training entries, which
takes minutes on a GPU and far too long on two CPU cores. The run depends on the base model
(see gptcourse.finetune.pretrained_base) and the device:

- the small model chapter 05 trains, on a CPU: every entry, a few epochs at a rate that suits a
  small model; its answers are weak (it has read one short story), which the notebook says;
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

from .messages import wrap_at_words
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
        lines = [f"{self.name}:",
                 f"  {self.num_epochs} epoch{'s' * (self.num_epochs > 1)} over {subset} in batches of {self.batch_size}",
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
