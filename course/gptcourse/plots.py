"""Pictures of attention: weight heatmaps, several heads side by side, causal masks, dropout.

Every helper accepts PyTorch tensors (on any device, with or without gradients) or NumPy
arrays, draws with matplotlib and seaborn, and returns the matplotlib object it drew on,
so you can add titles or save it. None of them calls ``plt.show()``: Jupyter shows the
figure at the end of the cell, and scripts decide for themselves.

Convention in all heatmaps: row ``i`` is the query (the token that is looking), column
``j`` is the key (the token being looked at), as in ``attn_weights[i, j]``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

ATTENTION_COLOURS = "viridis"
VISIBLE_COLOUR = "#9ecae1"  # light blue: a key the query may attend to
HIDDEN_COLOUR = "#3b3b3b"  # dark grey: a future key, masked out


def plot_attention(weights, tokens=None, *, title=None, ax=None, annot=True):
    """Heatmap of one ``(T, T)`` attention-weight matrix; returns the Axes.

    ``tokens``: ``T`` labels for the axes (strings or ids); positions 0..T-1 if omitted.
    ``annot``: write each weight in its cell (turn off for long sequences).
    """
    values = _as_numpy(weights)
    _check_square(values, ndim=2, what="weights")
    labels = _token_labels(tokens, len(values))
    if ax is None:
        _, ax = plt.subplots(figsize=_figure_size(len(values)), layout="constrained")
    _attention_heatmap(values, labels, ax, annot=annot, vmax=1.0, colour_bar=True)
    ax.set_title(title or "Attention weights")
    return ax


def plot_attention_heads(weights, tokens=None, *, title=None, annot=True):
    """A row of heatmaps, one per head, for weights of shape ``(num_heads, T, T)``.

    A leading batch dimension of size 1, ``(1, num_heads, T, T)``, is accepted too.
    Returns the Figure (one Axes per head plus one shared colour bar).
    """
    values = _as_numpy(weights)
    if values.ndim == 4 and values.shape[0] == 1:
        values = values[0]  # drop the batch dimension of a single example
    _check_square(values, ndim=3, what="weights")
    num_heads, num_tokens, _ = values.shape
    labels = _token_labels(tokens, num_tokens)

    fig, axes = plt.subplots(
        1,
        num_heads,
        figsize=_figure_size(num_tokens, panels=num_heads),
        squeeze=False,
        layout="constrained",
    )
    for head, ax in enumerate(axes[0]):
        _attention_heatmap(values[head], labels, ax, annot=annot, vmax=1.0, colour_bar=False)
        ax.set_title(f"head {head}")
    # All heads share the 0..1 colour scale, so one colour bar is enough.
    fig.colorbar(axes[0, 0].collections[0], ax=list(axes[0]))
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
    ``train()`` mode, where dropout zeroes some weights.
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
    # Dropout scales the weights it keeps by 1 / (1 - p), so they can exceed 1.
    # Both panels share one colour scale that covers them, to compare colours fairly.
    vmax = max(1.0, float(np.nanmax(after)))

    size = _figure_size(len(before), panels=2)
    fig, (left, right) = plt.subplots(1, 2, figsize=size, layout="constrained")
    _attention_heatmap(before, labels, left, annot=annot, vmax=vmax, colour_bar=False)
    left.set_title("without dropout (eval mode)")
    _attention_heatmap(after, labels, right, annot=annot, vmax=vmax, colour_bar=False)
    right.set_title("with dropout (train mode)")
    fig.colorbar(left.collections[0], ax=[left, right])
    return fig


def _attention_heatmap(values, labels, ax, *, annot, vmax, colour_bar):
    """Draw one attention matrix on ``ax`` (shared by all the weight plots)."""
    sns.heatmap(
        values,
        ax=ax,
        cmap=ATTENTION_COLOURS,
        vmin=0.0,  # a fixed scale makes plots comparable: 0 is always the same colour
        vmax=vmax,
        annot=annot,
        fmt=".2f",
        annot_kws={"fontsize": 8},
        square=True,
        cbar=colour_bar,
        xticklabels=labels,
        yticklabels=labels,
    )
    _label_axes(ax)


def _label_axes(ax):
    ax.set_xlabel("key (being looked at)")
    ax.set_ylabel("query (looking)")
    ax.tick_params(axis="x", labelrotation=90)
    ax.tick_params(axis="y", labelrotation=0)


def _as_numpy(values) -> np.ndarray:
    """A float NumPy copy of a tensor (any device, with or without grad) or array."""
    if isinstance(values, torch.Tensor):
        # detach: drop the autograd graph; cpu: NumPy lives in main memory.
        return values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


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


def _figure_size(num_tokens: int, panels: int = 1, legend: bool = False) -> tuple[float, float]:
    """(width, height) in inches: grows with the sequence length so labels stay readable."""
    side = min(max(3.0, 0.5 * num_tokens + 1.5), 12.0)  # one square panel
    extra = 3.5 if legend else 1.0  # room for a legend or a colour bar
    return (side * panels + extra, side)
