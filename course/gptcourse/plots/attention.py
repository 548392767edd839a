"""Pictures of attention, for chapters 02 (self-attention) and 03 (multi-head attention): a
heatmap of the attention weights, several heads side by side, the causal mask, and what
dropout does to the weights.

Convention in all heatmaps: row ``i`` is the query (the token that is looking), column
``j`` is the key (the token being looked at), as in ``attn_weights[i, j]``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from .style import MAX_FIGURE_WIDTH, _as_numpy

ATTENTION_COLOURS = "viridis"
VISIBLE_COLOUR = "#9ecae1"  # light blue: a key the query may attend to
HIDDEN_COLOUR = "#3b3b3b"  # dark grey: a future key, masked out
MASKED_COLOUR = "#d9d9d9"  # light grey: a weight the causal mask set to 0 (no number shown)
DROPPED_COLOUR = "white"  # a weight dropout set to 0 in this step, marked with a red cross
DROPPED_MARK_COLOUR = "#d62728"


def plot_attention(weights, tokens=None, *, title=None, ax=None, annot=True, vmin=None, vmax=None):
    """Heatmap of one ``(T, T)`` attention-weight matrix; returns the Axes.

    ``tokens``: ``T`` labels for the axes (strings or ids); positions 0..T-1 if omitted.
    ``annot``: write each weight in its cell (turn off for long sequences).
    ``vmin``, ``vmax``: the ends of the colour scale. By default the scale spans the weights
    shown, so that the pattern stays visible when they are all close to each other (an
    untrained layer spreads its attention almost evenly); the numbers in the cells and the
    colour bar say what the colours mean. Give ``vmin=0, vmax=1`` to compare plots.

    Causal weights (all exactly 0 above the diagonal) show the masked cells in grey, without
    a number, and leave them out of the colour scale.
    """
    values = _as_numpy(weights)
    _check_square(values, ndim=2, what="weights")
    labels = _token_labels(tokens, len(values))
    if ax is None:
        _, ax = plt.subplots(figsize=_figure_size(len(values)), layout="constrained")
    masked = _causally_masked(values)
    vmin, vmax = _colour_range([values[~masked]], vmin, vmax)
    _attention_heatmap(values, labels, ax, annot=annot, vmin=vmin, vmax=vmax, hidden=masked)
    ax.figure.colorbar(ax.collections[0], ax=ax, label=_colour_bar_label(masked.any()))
    ax.set_title(title or "Attention weights")
    return ax


def plot_attention_heads(weights, tokens=None, *, title=None, annot=True):
    """A grid of heatmaps, one per head, for weights of shape ``(num_heads, T, T)``.

    A leading batch dimension of size 1, ``(1, num_heads, T, T)``, is accepted too.
    At most three heads per row (four heads make a 2 x 2 grid), so that the figure fits
    the width of a notebook. All heads share one colour scale, so their colours compare.
    Returns the Figure (one Axes per head plus one shared colour bar).
    """
    values = _as_numpy(weights)
    if values.ndim == 4 and values.shape[0] == 1:
        values = values[0]  # drop the batch dimension of a single example
    _check_square(values, ndim=3, what="weights")
    num_heads, num_tokens, _ = values.shape
    labels = _token_labels(tokens, num_tokens)
    rows, columns = _grid(num_heads)

    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=_figure_size(num_tokens, columns=columns, rows=rows),
        squeeze=False,
        layout="constrained",
    )
    masked = [_causally_masked(head) for head in values]
    vmin, vmax = _colour_range([head[~mask] for head, mask in zip(values, masked)])
    for head, ax in enumerate(axes.flat[:num_heads]):
        _attention_heatmap(values[head], labels, ax, annot=annot, vmin=vmin, vmax=vmax,
                           hidden=masked[head])
        ax.set_title(f"head {head}")
    for unused in axes.flat[num_heads:]:
        fig.delaxes(unused)
    heads = list(axes.flat[:num_heads])
    fig.colorbar(heads[0].collections[0], ax=heads, shrink=0.6,
                 label=_colour_bar_label(any(m.any() for m in masked)))
    if title:
        fig.suptitle(title)
    return fig


def plot_causal_mask(mask_or_T, tokens=None, *, ax=None, title=None):
    """Show which keys each query may see under a causal mask; returns the Axes.

    ``mask_or_T`` is either the sequence length ``T`` (the mask is then built as in the
    book, ``torch.triu(torch.ones(T, T), diagonal=1)``) or a ``(T, T)`` mask in which
    nonzero entries (1, True or -inf) mark the hidden, future positions.
    """
    hidden = _causal_mask(mask_or_T)
    labels = _token_labels(tokens, len(hidden))
    if ax is None:
        size = _figure_size(len(hidden), legend=True)
        _, ax = plt.subplots(figsize=size, layout="constrained")
    sns.heatmap(
        hidden.astype(int),
        ax=ax,
        cmap=ListedColormap([VISIBLE_COLOUR, HIDDEN_COLOUR]),
        vmin=0,
        vmax=1,
        cbar=False,
        square=True,
        linewidths=1,
        linecolor="white",
        xticklabels=labels,
        yticklabels=labels,
    )
    _label_axes(ax)
    legend_entries = [
        Patch(facecolor=VISIBLE_COLOUR, label="visible (past and present)"),
        Patch(facecolor=HIDDEN_COLOUR, label="hidden (future)"),
    ]
    # Put the legend to the right of the grid so it never covers a cell.
    ax.legend(handles=legend_entries, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.set_title(title or "Causal mask: a query sees only itself and earlier keys")
    return ax


def plot_dropout_effect(weights_eval, weights_train, tokens=None, *, annot=True):
    """Attention weights without dropout (left) and with dropout (right); returns the Figure.

    ``weights_eval``: from the model in ``eval()`` mode; ``weights_train``: the same input in
    ``train()`` mode, where dropout zeroes some weights and scales up the others.
    On the right, a weight that dropout set to 0 is white with a red cross; a weight the
    causal mask set to 0 is grey in both panels, so the two kinds of zero look different.
    """
    before = _as_numpy(weights_eval)
    after = _as_numpy(weights_train)
    _check_square(before, ndim=2, what="weights_eval")
    if after.shape != before.shape:
        raise ValueError(
            f"weights_eval and weights_train must have the same shape, "
            f"got {before.shape} and {after.shape}."
        )
    labels = _token_labels(tokens, len(before))
    masked = _causally_masked(before)
    dropped = (after == 0) & (before != 0)
    # One colour scale for both panels, so that colours compare: dropout scales the weights
    # it keeps by 1 / (1 - p), so they can exceed 1.
    vmin, vmax = _colour_range([before[~masked], after[~masked & ~dropped]])

    size = _figure_size(len(before), columns=2)
    fig, (left, right) = plt.subplots(1, 2, figsize=size, layout="constrained")
    _attention_heatmap(before, labels, left, annot=annot, vmin=vmin, vmax=vmax, hidden=masked)
    left.set_title("without dropout (eval mode)")
    _attention_heatmap(after, labels, right, annot=annot, vmin=vmin, vmax=vmax, hidden=masked | dropped)
    _mark_dropped(right, dropped)
    right.set_title("with dropout (train mode)" + _scale_note(before, after, dropped | masked))
    fig.colorbar(left.collections[0], ax=[left, right], label="attention weight")
    legend = [Line2D([], [], marker="x", markersize=9, markeredgewidth=2, linestyle="none",
                     color=DROPPED_MARK_COLOUR, label="dropped in this step (set to 0)")]
    if masked.any():
        legend.insert(0, Patch(facecolor=MASKED_COLOUR, label="masked future (always 0)"))
    fig.legend(handles=legend, loc="outside lower center", ncols=len(legend), frameon=False)
    return fig


def _attention_heatmap(values, labels, ax, *, annot, vmin, vmax, hidden):
    """Draw one attention matrix on ``ax`` (shared by all the weight plots).

    Cells where ``hidden`` is True are not drawn: the grey background shows through.
    """
    ax.set_facecolor(MASKED_COLOUR)
    sns.heatmap(
        values,
        ax=ax,
        mask=hidden,
        cmap=ATTENTION_COLOURS,
        vmin=vmin,
        vmax=vmax,
        annot=annot,
        fmt=".2f",
        annot_kws={"fontsize": 8},
        square=True,
        cbar=False,
        xticklabels=labels,
        yticklabels=labels,
    )
    _label_axes(ax)


def _causally_masked(values):
    """True above the diagonal when every weight there is exactly 0 (a causal mask's work)."""
    above = np.triu(np.ones(values.shape, dtype=bool), k=1)
    if len(values) < 2 or np.any(values[above] != 0):
        return np.zeros(values.shape, dtype=bool)
    return above


def _colour_range(shown, vmin=None, vmax=None):
    """(vmin, vmax): the caller's, else the smallest and largest of the weights shown."""
    finite = np.concatenate([np.ravel(v) for v in shown] + [np.zeros(0)])
    finite = finite[np.isfinite(finite)]
    low = float(finite.min()) if finite.size else 0.0
    high = float(finite.max()) if finite.size else 1.0
    vmin = low if vmin is None else vmin
    vmax = high if vmax is None else vmax
    if vmax <= vmin:  # all weights equal (a uniform row): any small range will do
        vmin, vmax = vmin - 0.05, vmax + 0.05
    return vmin, vmax


def _colour_bar_label(with_masked):
    return "attention weight" + (" (grey: masked future)" if with_masked else "")


def _mark_dropped(ax, dropped):
    """A white cell with a red cross for every weight that dropout set to 0."""
    for row, column in zip(*np.nonzero(dropped)):
        ax.add_patch(Rectangle((column, row), 1, 1, facecolor=DROPPED_COLOUR, linewidth=0))
        inset = 0.25  # a cross in the middle of the cell
        for y0, y1 in ((row + inset, row + 1 - inset), (row + 1 - inset, row + inset)):
            ax.plot([column + inset, column + 1 - inset], [y0, y1],
                    color=DROPPED_MARK_COLOUR, linewidth=2)


def _scale_note(before, after, zeroed):
    """', kept weights x2.00' when every kept weight was scaled by the same factor."""
    kept = ~zeroed & (before != 0)
    if not kept.any():
        return ""
    factors = after[kept] / before[kept]
    if not np.allclose(factors, factors[0], rtol=1e-3):
        return ""
    return f"\nkept weights ×{factors[0]:.2f}"


def _grid(num_panels, max_columns=3):
    """(rows, columns) for a grid of panels: at most three per row, rows as even as can be."""
    rows = -(-num_panels // max_columns)  # ceiling division
    return rows, -(-num_panels // rows)


def _label_axes(ax):
    ax.set_xlabel("key (being looked at)")
    ax.set_ylabel("query (looking)")
    ax.tick_params(axis="x", labelrotation=90)
    ax.tick_params(axis="y", labelrotation=0)


def _check_square(values: np.ndarray, *, ndim: int, what: str) -> None:
    """Raise a clear error unless ``values`` has ``ndim`` dims and ends in ``(T, T)``."""
    if values.ndim != ndim or values.shape[-1] != values.shape[-2]:
        expected = "(T, T)" if ndim == 2 else "(num_heads, T, T)"
        raise ValueError(f"{what} must have shape {expected}, got {tuple(values.shape)}.")


def _token_labels(tokens, num_tokens: int) -> list[str]:
    """Axis labels: the given tokens as text, or the positions 0..T-1."""
    if tokens is None:
        return [str(position) for position in range(num_tokens)]
    if len(tokens) != num_tokens:
        raise ValueError(f"Got {len(tokens)} tokens for a {num_tokens}x{num_tokens} matrix.")
    return [str(token) for token in tokens]


def _causal_mask(mask_or_T) -> np.ndarray:
    """A boolean ``(T, T)`` array, True where a position is hidden."""
    if isinstance(mask_or_T, (int, np.integer)):
        ones = torch.ones(int(mask_or_T), int(mask_or_T))
        mask = torch.triu(ones, diagonal=1)  # 1 above the diagonal: the future
    else:
        mask = mask_or_T
    values = _as_numpy(mask)
    _check_square(values, ndim=2, what="mask")
    return values != 0


def _figure_size(num_tokens: int, columns: int = 1, rows: int = 1, legend: bool = False) -> tuple[float, float]:
    """(width, height) in inches: grows with the sequence length so labels stay readable,
    and never wider than a notebook's output area."""
    extra = 3.5 if legend else 1.2  # room for a legend or a colour bar
    side = min(max(3.0, 0.5 * num_tokens + 1.5), 12.0)  # one square panel
    side = min(side, (MAX_FIGURE_WIDTH - extra) / columns) if columns > 1 else side
    return (side * columns + extra, side * rows + 0.4 * (rows > 1))
