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

import contextlib
import io
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .messages import say, wrap_at_words
from .pretrain import QUICK_ENV_VAR
from .runtime import runtime_profile


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
        """A few short lines for the notebook: what the run does, then its notes."""
        subset = (f"the first {self.train_batches} batches of each epoch" if self.train_batches
                  else "every training batch")
        measured = (f"accuracies on the first {self.accuracy_batches} batches of each set" if self.accuracy_batches
                    else "accuracies on every message")
        lines = [f"{self.name}:", f"  {self.num_epochs} epoch{'s' * (self.num_epochs > 1)} over {subset}",
                 f"  AdamW lr {self.lr:g}, weight decay {self.weight_decay:g}", f"  {measured}"]
        return wrap_at_words("\n".join(lines + self.notes))


def pick_finetune_run(device, base):
    """The fine-tuning run for a base model ("gpt2" or "small") on this device."""
    from .notebook import being_graded

    # Any GPU of gptcourse.runtime.PEAK_FLOPS holds these runs (GPT-2 small, batches of 8):
    # only whether there is one decides.
    on_gpu = runtime_profile(device).is_gpu
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
        run.notes.append(f"quick run: 1 epoch of 10 batches only,\nbecause {why}")
    return run


# ------------------------------------------------------------------------------------------
# Chapter 08: LoRA's own settings
# ------------------------------------------------------------------------------------------

@dataclass
class LoRASettings:
    """What LoRA adds to chapter 07's run: the rank of the update, its scale alpha (the update is
    alpha * x @ A @ B), and AdamW's rate. The epochs, batches and data stay chapter 07's, so that
    the two ways of fine-tuning are compared on equal terms."""

    rank: int
    alpha: float
    lr: float
    why: str

    def describe(self):
        return wrap_at_words(f"LoRA: rank {self.rank}, alpha {self.alpha:g}, AdamW lr {self.lr:g}\n({self.why})")


def pick_lora_settings(base):
    """LoRA's settings for a base model ("gpt2" or "small").

    GPT-2: the book's, rank 16 and alpha 16 at 5e-4.

    The small model (emb_dim 128) gets settings chosen as a practitioner chooses them, on the
    validation set, against chapter 07's fine-tuning of the same model on the same data
    (benchmarks/lora_settings_bench.py prints the comparison):
    - the rank in proportion to the width: the book's 16 is 2 % of GPT-2's 768 dimensions; 4 is
      3 % of 128, and trains a fifth of the parameters chapter 07's way trains;
    - the size of LoRA's steps: Adam moves B by about the rate each step, and alpha multiplies
      what that does to the output, so alpha and the rate act as one knob, alpha * lr. The
      book's 16 * 5e-4 is a step the small model does not take well: its training accuracy
      stalls below 90 % and its validation accuracy jumps around, so LoRA looked worse than
      chapter 07's way (84 % on the test set against 87 % at rank 16, 76 % at rank 4). At
      chapter 07's rate, 5e-4, rank 4 with alpha 1, 2 or 4 reached chapter 07's accuracies, as
      the book finds for GPT-2; alpha 2 had the best validation accuracy, and chapter 08 takes
      it. (Ranks 8 and 16 at alpha 1 did as well, with two and four times the parameters.)
    """
    if base == "gpt2":
        return LoRASettings(16, 16, 5e-4, "the book's: a rate ten times chapter 07's, since B starts at zero")
    return LoRASettings(4, 2, 5e-4, "chosen for the small model, 128 wide: the rank in proportion to the "
                                    "book's 16 for GPT-2's 768, alpha on the validation set: see section 6")


# ------------------------------------------------------------------------------------------
# What chapter 08 reuses from chapter 07's notebook
# ------------------------------------------------------------------------------------------

def pretrained_base(device, tokenizer, GPTModel, load_weights_into_gpt, train_model, create_dataloader_v1):
    """(model, cfg, base): GPT-2 small with OpenAI's weights when they can be had ("gpt2"), else
    chapter 05's small GPT pretrained here on The Verdict ("small"), saying so in one line. The
    course's functions come in as arguments: the notebook passes the student's own."""
    from .data import read_text
    from .pretrain import TrainingProgress, make_optimizer, pick_run

    gpt2 = gpt2_small_if_at_hand(device, GPTModel, load_weights_into_gpt)
    if gpt2 is not None:
        return gpt2
    say("No GPT-2 weights here, so the base model is chapter 05's small GPT, pretrained now on The Verdict: "
        "its accuracy is not the book's.")
    run = pick_run(device, small=True)
    text = read_text(run.data)
    split, context_length = int(0.9 * len(text)), run.cfg["context_length"]
    torch.manual_seed(123)
    train_loader = create_dataloader_v1(text[:split], batch_size=run.batch_size, max_length=context_length,
                                        stride=context_length, drop_last=True, shuffle=True, num_workers=0)
    val_loader = create_dataloader_v1(text[split:], batch_size=run.batch_size, max_length=context_length,
                                      stride=context_length, drop_last=False, shuffle=False, num_workers=0)
    torch.manual_seed(123)
    cfg = dict(run.cfg)
    model = GPTModel(cfg).to(device)
    optimizer = make_optimizer(model, run)
    progress = TrainingProgress(train_loader, run.num_epochs, desc="pretraining")
    started = time.perf_counter()
    with run.autocast(device), contextlib.redirect_stdout(io.StringIO()):  # its samples are chapter 05's story
        losses = train_model(model, progress, val_loader, optimizer, device, run.num_epochs, run.eval_freq,
                             run.eval_iter, "Every effort moves you", tokenizer,
                             warmup_steps=run.warmup_steps(len(train_loader)), initial_lr=run.initial_lr,
                             min_lr=run.min_lr)
    progress.close()
    say(f"pretrained in {time.perf_counter() - started:.0f} s ({run.name}, {run.num_epochs} epochs on {run.data}); "
        f"final training loss {losses[0][-1]:.2f}")
    return model, cfg, "small"


def gpt2_small_if_at_hand(device, GPTModel, load_weights_into_gpt):
    """(model, cfg, "gpt2"): GPT-2 small with OpenAI's weights, loaded with the function passed in,
    saying so in one line; None when the weights cannot be had (the loader says why)."""
    from .gpt2_weights import GPT2_124M_CONFIG, try_load_gpt2_state_dict

    state = try_load_gpt2_state_dict()
    if state is None:
        return None
    cfg = dict(GPT2_124M_CONFIG)
    model = GPTModel(cfg)
    load_weights_into_gpt(model, state)
    say("base model: GPT-2 small (124M), OpenAI's weights, as in the book")
    return model.to(device), cfg, "gpt2"


def spam_loaders(SpamDataset, folder, tokenizer, context_length, batch_size=8):
    """Chapter 07's data sets of the splits in `folder` (train.csv, validation.csv, test.csv), made
    with the SpamDataset passed in, and their loaders: (train_loader, val_loader, test_loader,
    padded_length).

    As in the book, the training set is padded to its longest message and the other two are
    padded, or cut, to that length. The book asserts that this length fits the model's context
    and advises max_length=context_length when it does not: here that cut is made, in one line.
    It happens: the longest training message depends on the split, and so on the order of the
    balanced rows, which Task 7.1 leaves free: with the spam rows first it is 132 tokens, and the
    small model's position embedding has 128 rows (an IndexError in every cell that runs it).
    """
    from torch.utils.data import DataLoader

    folder = Path(folder)
    train_dataset = SpamDataset(folder / "train.csv", tokenizer)
    padded_length = len(train_dataset[0][0])  # every item has the padded length
    if padded_length > context_length:
        say(f"The longest training message has {padded_length} tokens, more than the model's context of "
            f"{context_length}: every message is cut to its first {context_length} tokens.")
        padded_length = context_length
        train_dataset = SpamDataset(folder / "train.csv", tokenizer, max_length=padded_length)
    val_dataset = SpamDataset(folder / "validation.csv", tokenizer, max_length=padded_length)
    test_dataset = SpamDataset(folder / "test.csv", tokenizer, max_length=padded_length)
    train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True, drop_last=True, num_workers=0)
    val_loader = DataLoader(val_dataset, batch_size=batch_size, shuffle=False, num_workers=0)
    test_loader = DataLoader(test_dataset, batch_size=batch_size, shuffle=False, num_workers=0)
    return train_loader, val_loader, test_loader, padded_length


def train_classifier(model, train_loader, val_loader, optimizer, device, run, calc_loss_batch_cls,
                     calc_accuracy_loader):
    """Chapter 07's fine-tuning loop, with the run's settings (gptcourse.finetune.FinetuneRun)
    and the loss and accuracy functions passed in. Returns (train_losses, val_losses,
    train_accs, val_accs, examples_seen, seconds_per_epoch)."""
    from gptcourse.progress import progress_bar

    def mean_loss(loader):
        batches = min(run.eval_iter, len(loader))
        return sum(calc_loss_batch_cls(x, y, model, device).item() for _, (x, y) in zip(range(batches), loader)) / batches

    train_losses, val_losses, train_accs, val_accs, examples, epoch_seconds = [], [], [], [], [], []
    seen, step = 0, -1
    steps_per_epoch = len(train_loader) if run.train_batches is None else min(run.train_batches, len(train_loader))
    bar = progress_bar(total=steps_per_epoch * run.num_epochs, desc="fine-tuning", unit="step")
    for epoch in range(run.num_epochs):
        model.train()
        started, evaluating = time.perf_counter(), 0.0
        for batch, (input_batch, target_batch) in zip(range(steps_per_epoch), train_loader):
            optimizer.zero_grad()
            calc_loss_batch_cls(input_batch, target_batch, model, device).backward()
            optimizer.step()
            seen, step = seen + input_batch.shape[0], step + 1
            bar.update(1)
            if step % run.eval_freq == 0:
                paused = time.perf_counter()
                model.eval()
                with torch.no_grad():
                    train_losses.append(mean_loss(train_loader))
                    val_losses.append(mean_loss(val_loader))
                model.train()
                examples.append(seen)
                evaluating += time.perf_counter() - paused
        epoch_seconds.append(time.perf_counter() - started - evaluating)  # training steps only
        train_accs.append(calc_accuracy_loader(train_loader, model, device, num_batches=run.accuracy_batches))
        val_accs.append(calc_accuracy_loader(val_loader, model, device, num_batches=run.accuracy_batches))
        bar.write(wrap_at_words(f"epoch {epoch + 1}: training accuracy {train_accs[-1]:.1%}, validation accuracy "
                                f"{val_accs[-1]:.1%}, {epoch_seconds[-1]:.1f} s of training steps"))
    bar.close()
    return train_losses, val_losses, train_accs, val_accs, examples, epoch_seconds
