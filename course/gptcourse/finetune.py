"""Chapter 07's fine-tuning runs: how long to fine-tune a classifier on this machine.

Fine-tuning a classifier is cheap for a small model and slow for GPT-2 on a CPU: a pass of
GPT-2 124M over the 1,045 training messages (120 tokens each) costs about 25 TFLOP, minutes
per epoch on two CPU cores. So the run depends on the base model and the device:

- the small model chapter 05 trains (any device): the book's five epochs over every message;
- GPT-2 124M on a GPU: the book's run, five epochs over every message;
- GPT-2 124M on a CPU: one epoch over a subset of the training batches, and the accuracies
  measured on a subset of each set, so that the notebook stays within minutes. The notebook
  says so, and its numbers are then not the book's.

While nbgrader runs the notebook, or when GPTCOURSE_QUICK_RUN is set, every run shrinks to one
epoch of a few batches: a grader learns nothing from minutes of fine-tuning.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch

from .pretrain import QUICK_ENV_VAR


@dataclass
class FinetuneRun:
    name: str
    num_epochs: int
    lr: float  # AdamW's rate (constant: the book uses no schedule here)
    weight_decay: float = 0.1
    eval_freq: int = 50  # steps between two loss evaluations
    eval_iter: int = 5  # batches per loss evaluation
    train_batches: int | None = None  # training batches per epoch (None: all of them)
    accuracy_batches: int | None = None  # batches per accuracy measurement (None: all of them)
    notes: list = field(default_factory=list)

    def describe(self):
        subset = (f"the first {self.train_batches} batches of each epoch" if self.train_batches
                  else "every training batch")
        measured = (f"accuracies on the first {self.accuracy_batches} batches of each set" if self.accuracy_batches
                    else "accuracies on every message")
        lines = [f"{self.name}: {self.num_epochs} epoch{'s' * (self.num_epochs > 1)} over {subset}, AdamW lr "
                 f"{self.lr:g}, weight decay {self.weight_decay:g}; {measured}"]
        return "\n".join(lines + self.notes)


def pick_finetune_run(device, base):
    """The fine-tuning run for a base model ("gpt2" or "small") on this device."""
    from .notebook import being_graded

    on_gpu = torch.device(device).type == "cuda"
    if base == "small":
        run = FinetuneRun("small model, full run", num_epochs=5, lr=5e-4)
    elif on_gpu:
        run = FinetuneRun("GPT-2 124M, the book's run", num_epochs=5, lr=5e-5)
    else:
        run = FinetuneRun("GPT-2 124M on a CPU, a shortened run", num_epochs=1, lr=5e-5, eval_freq=10, eval_iter=2,
                          train_batches=40, accuracy_batches=10,
                          notes=["GPT-2 takes minutes per epoch on a CPU: this run fine-tunes on a subset, so its "
                                 "accuracy is lower than the book's (about 96 % on the test set after 5 full epochs)"])
    if os.environ.get(QUICK_ENV_VAR) or being_graded():
        why = f"{QUICK_ENV_VAR} is set" if os.environ.get(QUICK_ENV_VAR) else "nbgrader is running this notebook"
        run.num_epochs, run.train_batches, run.accuracy_batches, run.eval_freq = 1, 10, 5, 5
        run.notes.append(f"quick run: 1 epoch of 10 batches only, because {why}")
    return run
