"""Pictures of fine-tuning a GPT as a spam classifier, for chapter 07: messages per class,
message lengths in tokens with the padding they cost, loss and accuracy while fine-tuning, and
the confusion matrix. Chapter 08 (LoRA) draws its training with ``plot_classifier_training``
too, and uses ``plot_rank_energy`` to show how much a low-rank approximation keeps.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.colors import to_rgb
from matplotlib.ticker import MaxNLocator, PercentFormatter, StrMethodFormatter

from .style import MAX_FIGURE_WIDTH, TRAIN_COLOUR, VAL_COLOUR, _as_numpy, _check_count

CLASS_COLOURS = ("#6baed6", "#fd8d3c", "#74c476", "#9e9ac8", "#fdae6b", "#969696")  # blue: ham, orange: spam
SET_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")  # train blue, validation red, test green
PADDED_COLOUR = "#252525"  # near black: the length every message is padded to
CONTEXT_COLOUR = "#7f7f7f"  # grey: the model's context length
CONFUSION_COLOURS = "Blues"  # sequential: a larger share of the true class is darker


def plot_class_balance(counts_by_set, *, ax=None, title=None):
    """Messages per class in one or more sets, as groups of bars; returns the Axes.

    ``counts_by_set``: ``{set name: {class name: number of messages}}``, for instance
    ``{"all messages": {"ham": 4827, "spam": 747}, "balanced": {"ham": 747, "spam": 747}}``.
    One group of bars per set, one colour per class (the same in every group), each bar
    labelled with its count. A class missing from a set counts 0 there.
    """
    if not counts_by_set:
        raise ValueError("counts_by_set is empty: give {set name: {class name: number of messages}}.")
    classes = []
    for name, counts in counts_by_set.items():
        if not counts:
            raise ValueError(f"{name}: no classes; give {{class name: number of messages}}.")
        classes += [c for c in counts if c not in classes]
    if len(classes) > len(CLASS_COLOURS):
        raise ValueError(f"at most {len(CLASS_COLOURS)} classes fit one readable picture, got {len(classes)}.")
    table = np.zeros((len(counts_by_set), len(classes)))
    for row, (name, counts) in enumerate(counts_by_set.items()):
        for column, cls in enumerate(classes):
            value = float(_as_numpy(counts.get(cls, 0)))
            if value < 0 or value != round(value):
                raise ValueError(f"{name}, {cls}: a number of messages is a whole number, not negative; got {value:g}.")
            table[row, column] = value
    if ax is None:
        width = min(MAX_FIGURE_WIDTH, 2.5 + 0.8 * table.size + 0.4 * len(counts_by_set))
        _, ax = plt.subplots(figsize=(max(width, 5.0), 4.2), layout="constrained")
    groups = np.arange(len(counts_by_set))
    width = 0.8 / len(classes)
    for column, (cls, colour) in enumerate(zip(classes, CLASS_COLOURS)):
        offset = (column - (len(classes) - 1) / 2) * width
        bars = ax.bar(groups + offset, table[:, column], width, color=colour, edgecolor="white", label=str(cls))
        ax.bar_label(bars, labels=[f"{int(v):,}" for v in table[:, column]], padding=2, fontsize=9)
    ax.set_xticks(groups, [f"{name}\n({int(total):,} messages)" for name, total in zip(counts_by_set, table.sum(1))])
    ax.set_xlim(-0.7, len(groups) - 0.3)  # a margin beside the outer bars, even for a single set
    ax.set_ylabel("messages")
    ax.set_ylim(0, max(table.max(), 1) * 1.3)  # room for the counts and the legend above the bars
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))  # 5,000 like the counts on the bars
    ax.grid(True, axis="y", color="#eeeeee")
    ax.set_axisbelow(True)
    ax.legend(frameon=False, loc="upper center", ncols=len(classes), title="class")
    ax.set_title(title or "Messages per class")
    return ax


def _plural(noun, count):
    """"message" or "messages", "entry" or "entries", by count."""
    if count == 1:
        return noun
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def plot_token_lengths(lengths_by_set, *, padded_to=None, context_length=None, ax=None, title=None, bins=30,
                       item="message"):
    """Histograms of the message lengths in tokens, one outline per set, on shared bins;
    returns the Axes.

    ``lengths_by_set``: ``{set name: lengths}``, the number of tokens of every message (a
    list, array or tensor of whole numbers), for instance ``{"train": ..., "validation": ...,
    "test": ...}``. ``padded_to``: a dashed line at the length every message is padded to (the
    longest message, or ``max_length``); the legend then says, for each set, what share of the
    tokens of its padded messages would be padding, ``mean(padded_to - min(length, padded_to))
    / padded_to``, which is what padding to the longest costs, and how many messages would be
    cut. ``item`` names what is counted in the legend and on the axes ("entry" for chapter 09's
    instructions). ``context_length``: a line at the model's context length; when it lies far beyond the
    longest message (1,024 against about 120 tokens for GPT-2 and the SMS messages), only the
    legend names it, as off the scale, so that the histograms stay readable.
    """
    if not lengths_by_set:
        raise ValueError("lengths_by_set is empty: give {set name: the number of tokens of every message}.")
    if len(lengths_by_set) > len(SET_COLOURS):
        raise ValueError(f"at most {len(SET_COLOURS)} sets fit one readable picture, got {len(lengths_by_set)}.")
    _check_count("bins", bins, minimum=1)
    if padded_to is not None:
        _check_count("padded_to", padded_to, minimum=1)
    if context_length is not None:
        _check_count("context_length", context_length, minimum=1)
    lengths = {}
    for name, values in lengths_by_set.items():
        array = np.ravel(_as_numpy(values))
        if len(array) == 0:
            raise ValueError(f"{name}: no lengths; give the number of tokens of every message.")
        if np.any(array < 0) or np.any(array != np.round(array)):
            raise ValueError(f"{name}: a length is a whole number of tokens, not negative.")
        lengths[name] = array
    edges = np.histogram_bin_edges(np.concatenate(list(lengths.values())), bins=bins)
    if ax is None:
        _, ax = plt.subplots(figsize=(9.0, 4.4), layout="constrained")
    for (name, array), colour in zip(lengths.items(), SET_COLOURS):
        counts, _ = np.histogram(array, bins=edges)
        label = f"{name} ({len(array):,} {_plural(item, len(array))})"
        if padded_to is not None:
            padding = np.mean(padded_to - np.minimum(array, padded_to)) / padded_to
            cut = int(np.sum(array > padded_to))
            label += f"\n{100 * padding:.1f} % of padded tokens are padding"
            if cut:
                label += f", {cut:,} {_plural(item, cut)} cut"
        ax.stairs(counts, edges, fill=True, facecolor=(*to_rgb(colour), 0.12),
                  edgecolor=colour, linewidth=2, label=label)
    longest = float(edges[-1])
    right = max(longest, padded_to or 0) * 1.06
    if padded_to is not None:
        ax.axvline(padded_to, color=PADDED_COLOUR, linestyle="--", linewidth=1.5, label=f"padded to {padded_to} tokens")
    if context_length is not None:
        if context_length <= 1.5 * right:
            right = max(right, context_length * 1.04)
            ax.axvline(context_length, color=CONTEXT_COLOUR, linestyle="-.", linewidth=1.5,
                       label=f"context length ({context_length:,} tokens)")
        else:
            # No data: a legend entry only, so that the note never covers a bar.
            ax.plot([], [], color=CONTEXT_COLOUR, linestyle="-.", linewidth=1.5,
                    label=f"context length ({context_length:,} tokens):\nfar to the right, off this scale")
    ax.set_xlim(0, right)
    ax.set_xlabel(f"tokens per {item}")
    ax.set_ylabel(_plural(item, 2))
    ax.grid(True, axis="y", color="#eeeeee")
    ax.set_axisbelow(True)
    ax.legend(frameon=False, fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(title or "Message lengths in tokens")
    return ax


def plot_classifier_training(train_losses, val_losses, train_accs, val_accs, *, examples_seen=None, epochs=None,
                             examples_per_epoch=None, title=None):
    """Fine-tuning a classifier, two panels side by side; returns the Figure.

    Left: the training and validation loss at every evaluation, against the examples seen
    (``examples_seen``: one count per evaluation, or a single total, like the book's
    ``train_classifier_simple`` returns, which spreads the evaluations evenly from 0 to it as
    the book's plot does), or else against the evaluation number. ``epochs``: the number of
    epochs trained, shown on a second x axis at the top; give ``examples_per_epoch`` when the
    last evaluation does not end the training (otherwise it is assumed to). Right: the training and validation accuracy after every epoch, shares
    between 0 and 1 shown as percentages, with the last value written next to its point.
    """
    train, val = (np.ravel(_as_numpy(v)) for v in (train_losses, val_losses))
    train_acc, val_acc = (np.ravel(_as_numpy(v)) for v in (train_accs, val_accs))
    if len(train) == 0 or len(train_acc) == 0:
        raise ValueError("no losses or no accuracies: train (and evaluate) at least once.")
    if len(train) != len(val):
        raise ValueError(f"one loss per evaluation in each list: got {len(train)} training and {len(val)} "
                         f"validation losses.")
    if len(train_acc) != len(val_acc):
        raise ValueError(f"one accuracy per epoch in each list: got {len(train_acc)} training and {len(val_acc)} "
                         f"validation accuracies.")
    if np.any(train_acc < 0) or np.any(train_acc > 1) or np.any(val_acc < 0) or np.any(val_acc > 1):
        raise ValueError("accuracies must be shares between 0 and 1 (0.95, not 95).")
    if epochs is not None:
        _check_count("epochs", epochs, minimum=1)
    if examples_seen is None:
        x, x_label = np.arange(1, len(train) + 1), "evaluation"
    else:
        seen = np.ravel(_as_numpy(examples_seen))
        if len(seen) == 1:
            seen = np.linspace(0, seen[0], len(train))
        if len(seen) != len(train):
            raise ValueError(f"examples_seen needs one count per evaluation ({len(train)}) or a single total, "
                             f"got {len(seen)}.")
        if np.any(np.diff(seen) < 0) or np.any(seen < 0):
            raise ValueError("examples_seen must not decrease: it counts the examples trained on so far.")
        x, x_label = seen, "examples seen"

    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(MAX_FIGURE_WIDTH, 4.3), layout="constrained")
    loss_ax.plot(x, train, color=TRAIN_COLOUR, linewidth=2, label="training loss")
    loss_ax.plot(x, val, color=VAL_COLOUR, linewidth=2, linestyle="--", label="validation loss")
    loss_ax.set_xlabel(x_label)
    loss_ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no evaluation 1.5, no 2,500.5 examples
    loss_ax.set_ylabel("loss (cross-entropy)")
    loss_ax.set_ylim(0, max(np.nanmax(train), np.nanmax(val)) * 1.08)
    loss_ax.grid(True, axis="y", color="#eeeeee")
    loss_ax.legend(frameon=False, loc="upper right")
    loss_ax.set_title("Loss per evaluation")
    if epochs is not None and x[-1] > 0:
        per_epoch = float(examples_per_epoch) if examples_per_epoch else float(x[-1]) / epochs
        for start in range(1, epochs):
            loss_ax.axvline(start * per_epoch, color="#d9d9d9", linewidth=0.8, zorder=0)
        top = loss_ax.secondary_xaxis("top", functions=(lambda v: v / per_epoch, lambda e: e * per_epoch))
        top.set_xticks(range(epochs + 1))
        top.set_xlabel("epoch")

    epoch_numbers = np.arange(1, len(train_acc) + 1)
    acc_ax.plot(epoch_numbers, train_acc, color=TRAIN_COLOUR, linewidth=2, marker="o", clip_on=False,
                label="training accuracy")
    acc_ax.plot(epoch_numbers, val_acc, color=VAL_COLOUR, linewidth=2, marker="o", linestyle="--",
                clip_on=False, label="validation accuracy")
    # The two last values, right of their points: pushed apart when they are close, and both
    # lowered when the upper one would touch the top of the panel (about 200 points high).
    last = {"train": train_acc[-1], "val": val_acc[-1]}
    upper = "train" if last["train"] >= last["val"] else "val"
    shifts = {"train": 0.0, "val": 0.0}
    if abs(last["train"] - last["val"]) < 0.08:
        shifts = {name: 6.0 if name == upper else -8.0 for name in last}
    room = (1.0 - last[upper]) * 200.0 - 9.0  # points between the upper label's centre and the top
    lower_by = max(0.0, shifts[upper] - room)
    for name, colour in (("train", TRAIN_COLOUR), ("val", VAL_COLOUR)):
        acc_ax.annotate(f"{100 * last[name]:.1f} %", xy=(epoch_numbers[-1], last[name]),
                        xytext=(8, shifts[name] - lower_by), textcoords="offset points", ha="left", va="center",
                        fontsize=9, color=colour, fontweight="bold")
    acc_ax.set_xlim(0.5, len(train_acc) + 0.5 + 0.35 * max(1, len(train_acc) / 3))
    acc_ax.set_xticks(epoch_numbers)
    acc_ax.set_ylim(0, 1)
    acc_ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0, symbol=" %"))
    acc_ax.set_xlabel("epoch")
    acc_ax.set_ylabel("accuracy")
    acc_ax.grid(True, axis="y", color="#eeeeee")
    acc_ax.legend(frameon=False, loc="lower right")
    acc_ax.set_title("Accuracy per epoch")
    fig.suptitle(title or "Fine-tuning the classifier")
    return fig


def confusion_counts(labels, predictions, num_classes):
    """The confusion matrix as a ``(num_classes, num_classes)`` NumPy int array: entry
    ``[i, j]`` counts the messages of true class ``i`` predicted as class ``j``.

    ``labels``, ``predictions``: class indices (lists, arrays or tensors of whole numbers
    from 0 to ``num_classes - 1``), one of each per message.
    """
    _check_count("num_classes", num_classes, minimum=1)
    true = _class_indices(labels, "labels", num_classes)
    predicted = _class_indices(predictions, "predictions", num_classes)
    if len(true) != len(predicted):
        raise ValueError(f"one prediction per label: got {len(true)} labels and {len(predicted)} predictions.")
    return np.bincount(true * num_classes + predicted, minlength=num_classes * num_classes).reshape(
        num_classes, num_classes)


def plot_confusion_matrix(labels, predictions, *, class_names=("not spam", "spam"), ax=None, title=None):
    """Heatmap of the confusion matrix, rows the true class and columns the predicted one;
    returns the Axes.

    ``labels``, ``predictions``: class indices, one of each per message (lists, arrays or
    tensors); ``class_names``: one name per class, in the order of the indices. Each cell
    shows its count and its share of the row (of the messages of that true class); the
    colour follows that share, so the diagonal (the right answers) stands out even when one
    class has many more messages than another. The title gives the overall accuracy.
    """
    names = [str(name) for name in class_names]
    if len(names) < 2:
        raise ValueError(f"class_names needs a name for each of at least 2 classes, got {len(names)}.")
    counts = confusion_counts(labels, predictions, len(names))
    if counts.sum() == 0:
        raise ValueError("labels is empty: give the class of every message.")
    row_totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, row_totals, out=np.zeros(counts.shape), where=row_totals > 0)
    annotations = np.array([[f"{count:,}\n{100 * share:.1f} %" if total else f"{count:,}"
                             for count, share in zip(row, row_shares)]
                            for row, row_shares, total in zip(counts, shares, row_totals[:, 0])])
    if ax is None:
        side = min(max(3.6, 0.9 * len(names) + 1.8), 7.0)
        _, ax = plt.subplots(figsize=(side + 1.6, side + 0.3), layout="constrained")
    sns.heatmap(shares, ax=ax, annot=annotations, fmt="", cmap=CONFUSION_COLOURS, vmin=0, vmax=1, square=True,
                linewidths=1, linecolor="white", xticklabels=names, yticklabels=names,
                annot_kws={"fontsize": 11 if len(names) <= 4 else 9 if len(names) <= 8 else 7},
                cbar_kws={"label": "share of the true class", "format": PercentFormatter(1.0, decimals=0, symbol=" %")})
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    if len(names) > 4:  # slanted, each name ending under its column
        plt.setp(ax.get_xticklabels(), rotation=40, ha="right", rotation_mode="anchor")
    ax.tick_params(axis="y", labelrotation=0)
    correct, total = int(np.trace(counts)), int(counts.sum())
    ax.set_title(f"{title or 'Confusion matrix'}\naccuracy {100 * correct / total:.1f} % ({correct:,} of {total:,})")
    return ax


def _class_indices(values, what, num_classes):
    """values as a 1-d NumPy int array of class indices, checked to lie in 0..num_classes - 1."""
    array = np.ravel(_as_numpy(values))
    if np.any(array != np.round(array)):
        raise ValueError(f"{what} must be class indices (whole numbers), not probabilities or logits: "
                         f"take the argmax first.")
    array = array.astype(np.int64)
    outside = array[(array < 0) | (array >= num_classes)]
    if len(outside):
        raise ValueError(f"{what} must be class indices from 0 to {num_classes - 1} ({num_classes} classes), "
                         f"got {outside[0]}: give one class name per class.")
    return array


def plot_rank_energy(matrices, *, ranks=(), ax=None, title=None):
    """How much of each matrix a low-rank approximation keeps; returns the Axes.

    ``matrices``: ``{name: 2-d matrix}`` (a weight change, a random matrix of the same shape to
    compare with, ...). For each, the share of its squared Frobenius norm that its best rank-r
    approximation keeps (the sum of its r largest squared singular values over all of them),
    against r. Dotted vertical lines mark ``ranks`` (LoRA's rank, say), each labelled with the
    shares kept there.
    """
    if not matrices:
        raise ValueError("no matrices to plot: pass {name: matrix}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 4.2), layout="constrained")
    shares = {}
    for name, matrix in matrices.items():
        values = _as_numpy(matrix).astype(np.float64)
        if values.ndim != 2:
            raise ValueError(f"{name}: a matrix has 2 dimensions, got shape {values.shape}.")
        shares[name] = rank_energy(values)
        ax.plot(np.arange(1, len(shares[name]) + 1), shares[name], linewidth=2, label=name)
    for rank in ranks:
        kept = ", ".join(f"{share[min(rank, len(share)) - 1]:.0%}" for share in shares.values())
        ax.axvline(rank, color="#888888", linestyle=":", linewidth=1)
        ax.annotate(f"r = {rank}: {kept}", (rank, 0.5), xytext=(4, 0), textcoords="offset points", fontsize=9,
                    color="#555555")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("rank r of the approximation")
    ax.set_ylabel("share of the matrix kept\n(squared Frobenius norm)")
    ax.grid(True, axis="y", color="#eeeeee")
    ax.legend(frameon=False, loc="lower right")
    ax.set_title(title or "How much a rank-r approximation keeps")
    return ax


def rank_energy(matrix):
    """The share of a matrix's squared Frobenius norm that its best rank-r approximation keeps,
    for r = 1, 2, ...: cumulative squared singular values over their total (Eckart-Young)."""
    singular = np.linalg.svd(_as_numpy(matrix).astype(np.float64), compute_uv=False)
    energy = np.cumsum(singular ** 2)
    return energy / energy[-1] if energy[-1] > 0 else np.zeros_like(energy)
