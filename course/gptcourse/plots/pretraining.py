"""Pictures of pretraining, for chapter 05: the probability of each target token, loss curves
with the tokens seen, the learning-rate schedule, gradient norms before and after clipping,
training runs compared, and the speed of each step towards a fast GPU run.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import BAR_COLOUR, MAX_FIGURE_WIDTH, TRAIN_COLOUR, UNIFORM_COLOUR, VAL_COLOUR, _as_numpy, _check_count

WARMUP_COLOUR = "#fdd0a2"  # pale orange: the warmup steps
BEFORE_COLOUR = "#fd8d3c"  # orange: a gradient before clipping
AFTER_COLOUR = "#3182bd"  # blue: the same gradient after clipping
RUN_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def plot_target_probabilities(probs, labels, *, vocab_size, ax=None, title=None):
    """The probability a model gives each correct next token, one bar per position, on a log
    scale; returns the Axes.

    ``probs``: 1-d, the softmax probability of the target token at every position (pick them
    out of the ``(..., vocab_size)`` probabilities first). ``labels``: one label per bar (the
    target token as text, say). ``vocab_size``: for the dashed line at the uniform
    ``1 / vocab_size``, what a model that knows nothing would give every token. Each bar is
    labelled, at its foot, with its ``-log p``: the loss is the mean of these numbers.
    """
    values = _as_numpy(probs)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError(f"probs must be a 1-d sequence of probabilities, got shape {tuple(values.shape)}.")
    if np.any(values <= 0) or np.any(values > 1):
        raise ValueError("probs must be probabilities in (0, 1]: a log scale cannot show 0.")
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} probabilities.")
    _check_count("vocab_size", vocab_size, minimum=2)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(MAX_FIGURE_WIDTH, 2.0 + 1.1 * len(values)), 4.0), layout="constrained")
    positions = np.arange(len(values))
    ax.bar(positions, values, color=BAR_COLOUR, edgecolor="#3182bd")
    uniform = 1.0 / vocab_size
    ax.axhline(uniform, color=UNIFORM_COLOUR, linestyle="--", linewidth=1.2,
               label=f"uniform: 1 / {vocab_size:,} = {uniform:.2e}")
    ax.set_yscale("log")
    bottom = min(values.min(), uniform) / 3  # every bar reaches at least 3 times this
    ax.set_ylim(bottom, max(values.max(), uniform) * 6)  # room for the legend above the bars
    for position, value in zip(positions, values):  # inside the foot of each bar, clear of the line
        ax.text(position, bottom * 1.2, f"−log p\n= {-np.log(value):.2f}", ha="center", va="bottom", fontsize=8.5)
    ax.set_xticks(positions, [str(label) for label in labels], family="monospace", fontsize=9)
    ax.set_xlabel("target token")
    ax.set_ylabel("probability of the target\n(log scale)")
    ax.legend(frameon=False, loc="upper right", fontsize=9)
    ax.set_title(title or f"Probability of the correct next token (loss = mean −log p = {-np.log(values).mean():.4f})")
    return ax


def plot_losses(train_losses, val_losses, tokens_seen, *, eval_freq=1, steps_per_epoch=None, ax=None, title=None):
    """Training and validation loss at every evaluation, against the step, with the tokens
    seen on a second x axis at the top; returns the (bottom) Axes.

    ``train_losses``, ``val_losses``, ``tokens_seen``: the three lists a training loop returns,
    one entry per evaluation. Evaluation ``i`` happened after step ``i * eval_freq`` (steps
    counted from 0). ``steps_per_epoch``: draws a faint line at the start of every epoch.
    The lowest validation loss is marked: after it, the model fits the training text better
    and better and new text worse (overfitting). The top axis's ticks sit at evaluation steps
    and are labelled with the tokens seen there.
    """
    train, val, tokens = (np.ravel(_as_numpy(v)) for v in (train_losses, val_losses, tokens_seen))
    if len(train) == 0:
        raise ValueError("train_losses is empty: train (and evaluate) at least once.")
    if not len(train) == len(val) == len(tokens):
        raise ValueError(f"one entry per evaluation in each list: got {len(train)} training losses, "
                         f"{len(val)} validation losses and {len(tokens)} token counts.")
    _check_count("eval_freq", eval_freq, minimum=1)
    if np.any(np.diff(tokens) < 0):
        raise ValueError("tokens_seen must not decrease: it counts the tokens trained on so far.")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.4), layout="constrained")
    steps = np.arange(len(train)) * eval_freq
    ax.plot(steps, train, color=TRAIN_COLOUR, linewidth=2, marker="o", markersize=3, label="training loss")
    ax.plot(steps, val, color=VAL_COLOUR, linewidth=2, marker="o", markersize=3, linestyle="--",
            label="validation loss")
    if np.isfinite(val).any():
        best = int(np.nanargmin(val))
        ax.plot([steps[best]], [val[best]], marker="*", markersize=14, color=VAL_COLOUR, linestyle="none",
                label=f"lowest validation loss ({val[best]:.2f}, step {steps[best]})")
    if steps_per_epoch:
        _check_count("steps_per_epoch", steps_per_epoch, minimum=1)
        for start in range(steps_per_epoch, int(steps[-1]) + 1, steps_per_epoch):
            ax.axvline(start, color="#d9d9d9", linewidth=0.8, zorder=0)
    ax.set_xlabel("training step" + (" (grey lines: a new epoch starts)" if steps_per_epoch else ""))
    ax.set_ylabel("loss (cross-entropy)")
    ax.set_ylim(0, max(np.nanmax(train), np.nanmax(val)) * 1.08)
    ax.legend(frameon=False)
    ax.grid(True, axis="y", color="#eeeeee")

    top = ax.twiny()  # the same steps, labelled with the tokens seen
    top.set_xlim(ax.get_xlim())
    shown = np.arange(0, len(steps), max(1, int(np.ceil((len(steps) - 1) / 5))))  # evenly spaced, at most 6
    top.set_xticks(steps[shown], [f"{int(tokens[i]):,}" for i in shown])
    top.set_xlabel("tokens seen")
    ax.set_title(title or "Training and validation loss")
    return ax


def plot_learning_rate(lrs, warmup_steps=None, *, ax=None, title=None):
    """The learning rate of every step (a list, one rate per step); returns the Axes.

    ``warmup_steps``: shades the warmup, the first ``warmup_steps`` steps, and marks the peak.
    """
    rates = np.ravel(_as_numpy(lrs))
    if len(rates) < 2:
        raise ValueError(f"lrs must hold the rate of every step (2 or more), got {len(rates)}.")
    if np.any(rates < 0):
        raise ValueError("a learning rate cannot be negative.")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 3.8), layout="constrained")
    steps = np.arange(len(rates))
    ax.plot(steps, rates, color=TRAIN_COLOUR, linewidth=2, label="learning rate")
    if warmup_steps:
        _check_count("warmup_steps", warmup_steps, minimum=1)
        if warmup_steps >= len(rates):
            raise ValueError(f"warmup_steps ({warmup_steps}) must be smaller than the number of steps ({len(rates)}).")
        ax.axvspan(-0.5, warmup_steps - 0.5, color=WARMUP_COLOUR, alpha=0.6, zorder=0,
                   label=f"warmup: steps 0 to {warmup_steps - 1}")
        ax.annotate(f"peak {rates[warmup_steps]:.2g} at step {warmup_steps}", xy=(warmup_steps, rates[warmup_steps]),
                    xytext=(warmup_steps + 0.06 * len(rates), rates[warmup_steps] * 0.6), fontsize=9,
                    arrowprops={"arrowstyle": "->", "color": "#636363"})
    ax.set_xlabel("training step")
    ax.set_ylabel("learning rate")
    ax.set_ylim(0, rates.max() * 1.1)
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
    ax.legend(frameon=False, loc="upper right")
    ax.set_title(title or "Learning rate per step")
    return ax


def plot_gradient_norms_per_step(before, after, *, max_norm=1.0, ax=None):
    """The total gradient norm of every step before clipping and after it; returns the Axes.

    ``before``: what ``torch.nn.utils.clip_grad_norm_`` returned at each step (the norm before
    clipping); ``after``: the norm recomputed after the call. A dashed line marks ``max_norm``.
    """
    first, second = np.ravel(_as_numpy(before)), np.ravel(_as_numpy(after))
    if len(first) == 0 or len(first) != len(second):
        raise ValueError(f"before and after need one norm per step each, got {len(first)} and {len(second)}.")
    if np.any(first < 0) or np.any(second < 0):
        raise ValueError("a norm cannot be negative.")
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.0), layout="constrained")
    steps = np.arange(len(first))
    width = 0.4
    ax.bar(steps - width / 2, first, width, color=BEFORE_COLOUR, label="before clipping")
    ax.bar(steps + width / 2, second, width, color=AFTER_COLOUR, label="after clipping")
    ax.axhline(max_norm, color="#252525", linestyle="--", linewidth=1.2, label=f"max_norm = {max_norm:g}")
    ax.set_xticks(steps)
    ax.set_ylim(0, max(first.max(), second.max(), max_norm) * 1.5)  # room for the legend above the bars
    ax.set_xlabel("training step")
    ax.set_ylabel("gradient norm (all parameters)")
    ax.legend(frameon=False, loc="upper center", ncols=2, fontsize=8.5)
    ax.set_title("Clipping caps every step's gradient norm")
    return ax


def plot_gradient_norms_per_tensor(before, after, *, ax=None):
    """The gradient norm of every parameter tensor before and after clipping, one pair of
    bars per tensor, on a log scale; returns the Axes.

    ``before``, ``after``: ``{parameter name: norm}`` with the same names. Clipping multiplies
    the whole gradient by one factor, so on the log scale every bar drops by the same amount.
    """
    if not before:
        raise ValueError("before is empty: give {parameter name: gradient norm}.")
    if list(before) != list(after):
        raise ValueError("before and after must name the same parameters in the same order.")
    names = list(before)
    first = np.array([float(_as_numpy(before[n])) for n in names])
    second = np.array([float(_as_numpy(after[n])) for n in names])
    if np.any(first <= 0) or np.any(second <= 0):
        raise ValueError("gradient norms must be positive for a log scale.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 0.9 + 0.32 * len(names)), layout="constrained")
    positions = np.arange(len(names))
    height = 0.4
    ax.barh(positions - height / 2, first, height, color=BEFORE_COLOUR, label="before clipping")
    ax.barh(positions + height / 2, second, height, color=AFTER_COLOUR, label="after clipping")
    ax.set_xscale("log")
    ax.set_xlim(min(first.min(), second.min()) / 2, max(first.max(), second.max()) * 2)
    ax.set_ylim(len(names) - 0.5, -1.6)  # the first parameter at the top, room for the legend above it
    ax.set_yticks(positions, names, family="monospace", fontsize=8)
    ax.set_xlabel("gradient norm of the tensor (log scale)")
    ax.legend(frameon=False, fontsize=8.5, loc="upper center", ncols=2)
    ax.set_title("One step, tensor by tensor: all scaled alike")
    return ax


def plot_runs_compared(runs, *, ax=None, title=None):
    """Loss curves of several training runs in one picture; returns the Axes.

    ``runs``: ``{label: (steps, train_losses, val_losses)}``, the steps at which each run
    evaluated. One colour per run; training loss solid, validation loss dashed.
    """
    if not runs:
        raise ValueError("runs is empty: give {label: (steps, train_losses, val_losses)}.")
    if len(runs) > len(RUN_COLOURS):
        raise ValueError(f"at most {len(RUN_COLOURS)} runs fit one readable picture, got {len(runs)}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.4), layout="constrained")
    highest = 0.0
    for (label, run), colour in zip(runs.items(), RUN_COLOURS):
        if len(run) != 3:
            raise ValueError(f"{label}: give (steps, train_losses, val_losses).")
        steps, train, val = (np.ravel(_as_numpy(v)) for v in run)
        if not len(steps) == len(train) == len(val) or len(steps) == 0:
            raise ValueError(f"{label}: {len(steps)} steps, {len(train)} training losses and {len(val)} "
                             f"validation losses; give one of each per evaluation.")
        ax.plot(steps, train, color=colour, linewidth=2, label=f"{label}: training")
        ax.plot(steps, val, color=colour, linewidth=2, linestyle="--", label=f"{label}: validation")
        highest = max(highest, np.nanmax(train), np.nanmax(val))
    ax.set_xlabel("training step")
    ax.set_ylabel("loss (cross-entropy)")
    ax.set_ylim(0, highest * 1.08)
    ax.grid(True, axis="y", color="#eeeeee")
    ax.legend(frameon=False, fontsize=9)
    ax.set_title(title or "Training runs compared")
    return ax


def plot_speed_steps(speeds, *, unit="tokens per second", title=None, ax=None):
    """Horizontal bars, one per step from a plain training step to a fast one, each labelled
    with its value and its speed-up over the first bar; returns the Axes.

    ``speeds``: ``{step name: value}`` (tokens per second, or MFU in percent with
    ``unit="MFU (%)"``), drawn top to bottom in that order. A step not measured is None: it
    gets a label and no bar.
    """
    if not speeds:
        raise ValueError("speeds is empty: give {step name: tokens per second}.")
    names, values = list(speeds), list(speeds.values())
    measured = [v for v in values if v is not None]
    if not measured or any(v <= 0 for v in measured):
        raise ValueError("give at least one speed, and only positive ones (None for a step not measured).")
    if ax is None:
        _, ax = plt.subplots(figsize=(MAX_FIGURE_WIDTH, 0.9 + 0.5 * len(names)), layout="constrained")
    positions = np.arange(len(names))
    first = values[0]
    largest = max(measured)
    for position, value in zip(positions, values):
        if value is None:
            ax.text(0.01 * largest, position, " not measured", va="center", fontsize=9, color="#777777")
            continue
        ax.barh(position, value, color=BAR_COLOUR, edgecolor="#3182bd")
        ratio = f"  ({value / first:.2f}x)" if first and position > 0 else ""
        shown = f"{value:,.0f}" if value >= 1000 else f"{value:.1f}"
        ax.text(value + 0.01 * largest, position, f" {shown}{ratio}", va="center", fontsize=9)
    ax.set_yticks(positions, names)
    ax.invert_yaxis()  # the first step at the top
    ax.set_xlim(0, largest * 1.3)  # room for the labels
    ax.set_xlabel(unit)
    ax.set_title(title or "From the plain training step to the fast one")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax
