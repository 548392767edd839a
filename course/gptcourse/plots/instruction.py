"""Pictures of instruction fine-tuning, for chapter 09: what the collate function made of a
batch (inputs, targets, padding and the targets the loss ignores), and the scores of the
model's responses.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from .style import MAX_FIGURE_WIDTH, _as_numpy, _check_count

BATCH_TOKEN_COLOUR = "#56b4e9"  # sky blue: a token of an instruction example (input or target)
BATCH_PADDING_COLOUR = "#949494"  # grey: padding in the inputs
BATCH_END_COLOUR = "#de8f05"  # orange: the one end-of-text target the model learns to predict
BATCH_IGNORED_COLOUR = "#3b3b3b"  # dark grey: a target the loss ignores, like the masked future in the attention plots
SCORE_COLOUR = "#0173b2"  # blue: the histogram of the scores
MEAN_COLOUR = "#252525"  # near black: the mean score
MAX_ANNOTATED_LENGTH = 24  # a batch this long (and at most this many entries) shows every id
MAX_ANNOTATED_BATCH = 8

# The kinds of cell in plot_collated_batch, in the order of the colour map.
_TOKEN, _PADDING, _END, _IGNORED = range(4)


def plot_collated_batch(inputs, targets, *, ignore_index=-100, pad_token_id=50256, ax=None, title=None,
                        annotate=None):
    """What a collate function made of a batch of instruction examples; returns the Figure.

    ``inputs``, ``targets``: ``(batch, length)`` token ids, tensors or arrays, as the collate
    function returns them. Two panels, one row per entry of the batch and one column per
    position: the inputs, each cell a token or padding (``pad_token_id``); and the targets,
    each cell a token, the end-of-text token the model must learn to write (the first padding
    token, kept on purpose), or a position the loss ignores (``ignore_index``). The panels
    stand side by side, or one above the other when the batch is too long for that.
    ``ax``: two Axes to draw the inputs and the targets on; by default a new figure.
    ``annotate``: write each id in its cell; by default only when the batch is small enough
    to read them (at most 24 positions and 8 entries).
    """
    ids = {"inputs": _token_ids(inputs, "inputs"), "targets": _token_ids(targets, "targets")}
    if ids["inputs"].shape != ids["targets"].shape:
        raise ValueError(f"inputs and targets must have the same shape, got {ids['inputs'].shape} and "
                         f"{ids['targets'].shape}: the targets are the inputs shifted by one position.")
    batch, length = ids["inputs"].shape
    if annotate is None:
        annotate = length <= MAX_ANNOTATED_LENGTH and batch <= MAX_ANNOTATED_BATCH
    kinds = {
        "inputs": np.where(ids["inputs"] == pad_token_id, _PADDING, _TOKEN),
        "targets": np.select([ids["targets"] == ignore_index, ids["targets"] == pad_token_id],
                             [_IGNORED, _END], default=_TOKEN),
    }
    if ax is None:
        fig, axes = _collated_batch_figure(batch, length, annotate)
    else:
        axes = list(np.ravel(ax))
        if len(axes) != 2:
            raise ValueError(f"ax must be two Axes, one for the inputs and one for the targets, got {len(axes)}.")
        fig = axes[0].figure
    panel_titles = {"inputs": "inputs", "targets": "targets (the inputs shifted left by one)"}
    for name, panel in zip(ids, axes):
        _batch_panel(panel, kinds[name], ids[name] if annotate else None)
        panel.set_title(panel_titles[name])
    legend = [
        Patch(facecolor=BATCH_TOKEN_COLOUR, label="token"),
        Patch(facecolor=BATCH_PADDING_COLOUR, label=f"padding ({pad_token_id})"),
        Patch(facecolor=BATCH_END_COLOUR, label="end of text (first padding: learned)"),
        Patch(facecolor=BATCH_IGNORED_COLOUR, label=f"ignored ({ignore_index})"),
    ]
    fig.legend(handles=legend, loc="outside lower center", ncols=2, frameon=False)
    learned = int(np.sum(kinds["targets"] != _IGNORED))
    fig.suptitle(f"{title or 'A collated batch'}\n{learned:,} of {batch * length:,} targets count in the loss")
    return fig


def plot_response_scores(scores, *, label="chrF", ax=None, title=None, bins=20):
    """Histogram of the scores of a model's responses, from 0 to 100; returns the Axes.

    ``scores``: one score per response (a list, array or tensor), chrF or a judge's; None
    values (responses that got no score) are left out and counted in the note. ``label``:
    the name of the score, for the axis and the title. A dashed line marks the mean.
    """
    _check_count("bins", bins, minimum=1)
    values, missing = _known_scores(scores)
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 4.2), layout="constrained")
    counts, _, _ = ax.hist(values, bins=np.linspace(0, 100, bins + 1), color=SCORE_COLOUR, edgecolor="white")
    mean = float(values.mean())
    ax.axvline(mean, color=MEAN_COLOUR, linestyle="--", linewidth=1.5, label=f"mean {mean:.1f}")
    note = f"mean {mean:.1f} over {len(values):,} {'response' if len(values) == 1 else 'responses'}"
    if missing:
        note += f"\n{missing:,} without a score (left out)"
    # The note goes in the upper corner away from the mean, above the bars (see the y limit).
    left = mean > 50
    ax.text(0.02 if left else 0.98, 0.96, note, transform=ax.transAxes, ha="left" if left else "right", va="top",
            fontsize=10, bbox={"facecolor": "white", "edgecolor": "#cccccc", "boxstyle": "round"})
    ax.set_xlim(0, 100)
    ax.set_ylim(0, max(counts.max(), 1) * 1.35)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # a number of responses is whole
    ax.set_xlabel(f"{label} score (0 to 100)")
    ax.set_ylabel("responses")
    ax.grid(True, axis="y", color="#eeeeee")
    ax.set_axisbelow(True)
    ax.set_title(title or f"{label} scores of the responses")
    return ax


def _token_ids(values, what):
    """values as a 2-d NumPy int array of token ids, or a ValueError that says what is wrong."""
    array = _as_numpy(values)
    if array.ndim != 2:
        raise ValueError(f"{what} must be 2-d, (batch, length), got shape {tuple(array.shape)}.")
    if array.size == 0:
        raise ValueError(f"{what} is empty, shape {tuple(array.shape)}: give at least one entry and position.")
    if np.any(array != np.round(array)):
        raise ValueError(f"{what} must be token ids (whole numbers), not logits or probabilities.")
    return array.astype(np.int64)


def _collated_batch_figure(batch, length, annotate):
    """A new figure with the two panels of plot_collated_batch, sized so that the cells
    (and the ids in them) stay readable at notebook width."""
    cell_width = 0.42 if annotate else 0.2
    side_by_side = 2 * length * cell_width + 2.5 <= MAX_FIGURE_WIDTH
    panels = 2 if side_by_side else 1  # panels in one row
    cell_width = min(cell_width, (MAX_FIGURE_WIDTH - 1.5 * panels) / (panels * length))
    cell_height = min(0.32, (5.0 if side_by_side else 2.6) / batch)
    width = min(MAX_FIGURE_WIDTH, max(5.5, panels * (length * cell_width + 1.2) + 0.3))
    height = batch * cell_height * (1 if side_by_side else 2) + (2.2 if side_by_side else 3.0)
    shape = (1, 2) if side_by_side else (2, 1)
    fig, axes = plt.subplots(*shape, figsize=(width, height), layout="constrained")
    return fig, list(axes)


def _batch_panel(ax, kinds, ids):
    """One panel of plot_collated_batch: a cell per token, coloured by its kind, with its id
    written in it when ``ids`` is given."""
    batch, length = kinds.shape
    colours = ListedColormap([BATCH_TOKEN_COLOUR, BATCH_PADDING_COLOUR, BATCH_END_COLOUR, BATCH_IGNORED_COLOUR])
    font_size = 8 if length <= 16 else 7
    lines = 0.5 if length <= 100 else 0.0  # white lines between cells, unless they would hide thin cells
    sns.heatmap(kinds, ax=ax, cmap=colours, vmin=-0.5, vmax=3.5, cbar=False, linewidths=lines, linecolor="white",
                annot=ids if ids is not None else False, fmt="d", annot_kws={"fontsize": font_size},
                xticklabels=False, yticklabels=False)
    # At most about 30 labelled columns and 20 labelled rows, so that the labels never overlap.
    column_step, row_step = _tick_step(length, 30), _tick_step(batch, 20)
    columns, rows = np.arange(0, length, column_step), np.arange(0, batch, row_step)
    ax.set_xticks(columns + 0.5, [str(c) for c in columns], rotation=0)
    ax.set_yticks(rows + 0.5, [f"entry {r}" for r in rows], rotation=0)
    ax.set_xlabel("position in the sequence")
    ax.set_ylabel("batch entry")


def _tick_step(count, most):
    """The smallest of 1, 2, 5, 10, 20, 50, ... that labels at most ``most`` of ``count`` cells."""
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        if -(-count // step) <= most:  # ceiling division: the number of labelled cells
            return step
    return -(-count // most)  # longer than any batch a notebook trains on: any even spacing will do


def _known_scores(scores):
    """(the scores that are not None or NaN as a float array, how many were left out);
    raises a ValueError when none are left or one lies outside 0..100."""
    if isinstance(scores, (torch.Tensor, np.ndarray)):
        everything = np.ravel(_as_numpy(scores))
    else:
        everything = np.array([np.nan if s is None else float(_as_numpy(s)) for s in scores], dtype=float)
    values = everything[~np.isnan(everything)]
    if len(values) == 0:
        raise ValueError("no scores to plot: every score is None (or the list is empty).")
    outside = values[(values < 0) | (values > 100)]
    if len(outside):
        raise ValueError(f"scores run from 0 to 100, got {outside[0]:g}: give shares between 0 and 1 times 100.")
    return values, len(everything) - len(values)
