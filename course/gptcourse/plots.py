"""The course's pictures: tokens and sliding windows (chapter 01), position encodings, and
attention (weight heatmaps, several heads side by side, causal masks, dropout).

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
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

ATTENTION_COLOURS = "viridis"
VISIBLE_COLOUR = "#9ecae1"  # light blue: a key the query may attend to
HIDDEN_COLOUR = "#3b3b3b"  # dark grey: a future key, masked out
MASKED_COLOUR = "#d9d9d9"  # light grey: a weight the causal mask set to 0 (no number shown)
DROPPED_COLOUR = "white"  # a weight dropout set to 0 in this step, marked with a red cross
DROPPED_MARK_COLOUR = "#d62728"
MAX_FIGURE_WIDTH = 10.0  # inches: about the width of a notebook's output area


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


def _figure_size(num_tokens: int, columns: int = 1, rows: int = 1, legend: bool = False) -> tuple[float, float]:
    """(width, height) in inches: grows with the sequence length so labels stay readable,
    and never wider than a notebook's output area."""
    extra = 3.5 if legend else 1.2  # room for a legend or a colour bar
    side = min(max(3.0, 0.5 * num_tokens + 1.5), 12.0)  # one square panel
    side = min(side, (MAX_FIGURE_WIDTH - extra) / columns) if columns > 1 else side
    return (side * columns + extra, side * rows + 0.4 * (rows > 1))


# --- Text data (chapter 01): token boundaries, sliding windows, position encodings ---------

TOKEN_BOX_COLOURS = ("#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb")  # pale blue, orange, green, purple
INPUT_COLOUR = "#3182bd"  # blue: the input window x
TARGET_COLOUR = "#e6550d"  # orange: the target window y, shifted by one token
STRIP_COLOUR = "#f0f0f0"  # light grey: the cells of the token strip
POSITION_COLOURS = "RdBu_r"  # diverging: negative blue, zero white, positive red
MAX_TOKENS_SHOWN = 200  # more token boxes than this no longer fit a readable picture
MAX_WINDOW_TOKENS = 40  # the same for the token strip of plot_sliding_windows
VISIBLE_WHITESPACE = {" ": "␣", "\n": "↵", "\t": "→"}

_CHAR_INCHES = 0.1  # width of one character of the 12-point monospace font of the boxes


def plot_token_boundaries(text, tokenizer, ax=None, *, line_width=80):
    """Draw ``text`` as its tokens: one coloured box per token, its id under the box.

    ``tokenizer``: anything with ``encode(text)`` and ``decode(ids)``, such as tiktoken's
    ``"gpt2"`` encoding or the course's ``SimpleTokenizerV2``. Special tokens in the text
    (``<|endoftext|>``) are encoded as such when the tokenizer supports ``allowed_special``.
    Neighbouring boxes have different colours, so you see where one token ends and the next
    begins. Whitespace inside a token is made visible: ``␣`` is a space, ``↵`` a line break,
    ``→`` a tab. ``line_width``: characters per line before the boxes wrap.
    Returns the Axes.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}.")
    if not text:
        raise ValueError("text is empty: give at least one character to tokenize.")
    if not (callable(getattr(tokenizer, "encode", None)) and callable(getattr(tokenizer, "decode", None))):
        raise TypeError("tokenizer must have encode(text) and decode(ids) methods, "
                        "like tiktoken.get_encoding('gpt2').")
    if line_width < 10:
        raise ValueError(f"line_width must be at least 10 characters, got {line_width}.")
    try:
        ids = list(tokenizer.encode(text, allowed_special="all"))
    except TypeError:  # a tokenizer without special-token handling, like SimpleTokenizerV2
        ids = list(tokenizer.encode(text))
    if len(ids) > MAX_TOKENS_SHOWN:
        raise ValueError(f"text has {len(ids)} tokens; at most {MAX_TOKENS_SHOWN} fit a readable "
                         f"picture: pass a shorter piece, such as text[:300].")
    pieces = [_visible(tokenizer.decode([token_id])) for token_id in ids]
    boxes, rows, used_width = _layout_boxes(pieces, ids, line_width)

    row_pitch, box_height = 5.5, 2.6  # in character widths, like the x coordinates
    if ax is None:
        size = (used_width * _CHAR_INCHES + 0.6, rows * row_pitch * _CHAR_INCHES + 0.7)
        _, ax = plt.subplots(figsize=size, layout="constrained")
    for index, (x, row, width) in enumerate(boxes):
        y = -row * row_pitch
        ax.add_patch(Rectangle((x, y - box_height), width, box_height, gid="token",
                               facecolor=TOKEN_BOX_COLOURS[index % len(TOKEN_BOX_COLOURS)],
                               edgecolor="#636363", linewidth=0.8))
        ax.text(x + width / 2, y - box_height / 2, pieces[index], ha="center", va="center",
                family="monospace", fontsize=12)
        ax.text(x + width / 2, y - box_height - 0.5, str(ids[index]), ha="center", va="top",
                fontsize=8, color="#525252")
    ax.set_xlim(-0.5, used_width + 0.5)
    ax.set_ylim(-rows * row_pitch + 0.5, 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"{len(ids)} tokens: one box per token, its id below it (␣ = space)", fontsize=11)
    return ax


def plot_sliding_windows(num_tokens, max_length, strides, ax=None, *, labels=None):
    """Input and target windows over a strip of ``num_tokens`` tokens, for one or more strides.

    The windows are those of the course's ``GPTDatasetV1``: a window starts every ``stride``
    tokens, at ``0, stride, 2 * stride, ...``, as long as the target (the input shifted by
    one token) still fits, so there are ``len(range(0, num_tokens - max_length, stride))``
    windows. Each window is one row: the input as a blue bar over ``max_length`` tokens,
    the target under it as an orange bar one token further right.
    ``strides``: one stride or a list of them (one group of rows each).
    ``labels``: optional text for the cells of the token strip (token ids or words);
    positions 0..num_tokens-1 by default.
    Returns the Axes.
    """
    strides = [strides] if isinstance(strides, (int, np.integer)) else list(strides)
    _check_count("num_tokens", num_tokens, minimum=2)
    _check_count("max_length", max_length, minimum=1)
    if not strides:
        raise ValueError("strides is empty: give at least one stride, such as [1, 4].")
    for stride in strides:
        _check_count("stride", stride, minimum=1)
    if num_tokens <= max_length:
        raise ValueError(f"num_tokens ({num_tokens}) must be larger than max_length ({max_length}): "
                         f"a window needs max_length inputs plus one more token for its last target.")
    if num_tokens > MAX_WINDOW_TOKENS:
        raise ValueError(f"num_tokens ({num_tokens}) is too long to draw readably; use at most "
                         f"{MAX_WINDOW_TOKENS}.")
    cell_labels = [str(i) for i in range(num_tokens)] if labels is None else [str(x) for x in labels]
    if len(cell_labels) != num_tokens:
        raise ValueError(f"Got {len(cell_labels)} labels for {num_tokens} tokens.")

    groups = [(int(stride), range(0, num_tokens - max_length, int(stride))) for stride in strides]
    num_rows = 1 + sum(1 + len(starts) for _, starts in groups)  # strip, then header + windows
    if ax is None:
        width = min(MAX_FIGURE_WIDTH, 2.2 + 0.55 * num_tokens)
        _, ax = plt.subplots(figsize=(width, 0.9 + 0.32 * num_rows), layout="constrained")

    # Row 0 (at the top): the token strip.
    for position, label in enumerate(cell_labels):
        ax.add_patch(Rectangle((position, 0.1), 1, 0.8, facecolor=STRIP_COLOUR, edgecolor="#969696",
                               linewidth=0.8, gid="strip"))
        ax.text(position + 0.5, 0.5, label, ha="center", va="center", fontsize=8)
    tick_rows, tick_labels = [0.5], ["tokens"]
    row = 1
    for stride, starts in groups:
        ax.text(0, row + 0.65, f"stride {stride}: {len(starts)} windows, {_overlap_note(stride, max_length)}",
                fontsize=10, fontweight="bold", va="center")
        row += 1
        for window, start in enumerate(starts):
            # Input and target of one window close together, a wider gap to the next window.
            ax.add_patch(Rectangle((start, row + 0.06), max_length, 0.36, facecolor=INPUT_COLOUR,
                                   gid=f"input:stride={stride}:window={window}"))
            ax.add_patch(Rectangle((start + 1, row + 0.44), max_length, 0.36, facecolor=TARGET_COLOUR,
                                   gid=f"target:stride={stride}:window={window}"))
            tick_rows.append(row + 0.43)
            tick_labels.append(f"window {window}")
            row += 1
    for boundary in range(num_tokens + 1):  # faint lines at token boundaries, to line bars up
        ax.axvline(boundary, color="#d9d9d9", linewidth=0.6, zorder=0)

    ax.set_xlim(0, num_tokens)
    ax.set_ylim(row, 0)  # row 0 at the top
    ax.set_xticks(np.arange(num_tokens) + 0.5, [str(i) for i in range(num_tokens)])
    ax.set_yticks(tick_rows, tick_labels)
    ax.tick_params(axis="both", length=0, labelsize=8)
    ax.set_xlabel("token position")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    legend = [Patch(facecolor=INPUT_COLOUR, label="input x (max_length tokens)"),
              Patch(facecolor=TARGET_COLOUR, label="target y (input shifted by one)")]
    ax.legend(handles=legend, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, frameon=False)
    ax.set_title(f"Sliding windows, max_length = {max_length}", pad=24)
    return ax


def plot_position_encoding_lines(encodings, dims, ax=None):
    """Some columns of a ``(num_positions, dim)`` position-encoding matrix, against position.

    ``dims``: the dimensions (columns) to draw, one line each. Returns the Axes.
    """
    values = _as_numpy(encodings)
    _check_encodings(values)
    dims = [int(d) for d in dims]
    if not dims:
        raise ValueError("dims is empty: name at least one dimension to draw.")
    outside = [d for d in dims if not 0 <= d < values.shape[1]]
    if outside:
        raise ValueError(f"dims {outside} are outside 0..{values.shape[1] - 1}, the encoding's dimensions.")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 3.8), layout="constrained")
    positions = np.arange(values.shape[0])
    for d in dims:
        ax.plot(positions, values[:, d], marker="." if values.shape[0] <= 60 else None,
                linewidth=1.5, label=f"dimension {d}")
    ax.axhline(0, color="#bdbdbd", linewidth=0.8, zorder=0)
    ax.set_xlabel("position in the sequence")
    ax.set_ylabel("encoding value")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("Position encodings: one line per dimension")
    return ax


def plot_position_encoding_heatmap(encodings, ax=None):
    """A ``(num_positions, dim)`` position-encoding matrix as a heatmap; returns the Axes.

    Rows are positions, columns dimensions; the colour scale is diverging and symmetric
    around 0 (blue negative, white 0, red positive), so the sign of every value shows.
    """
    values = _as_numpy(encodings)
    _check_encodings(values)
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.8), layout="constrained")
    limit = float(np.abs(values).max()) or 1.0
    image = ax.imshow(values, cmap=POSITION_COLOURS, vmin=-limit, vmax=limit, aspect="auto",
                      interpolation="nearest")
    ax.figure.colorbar(image, ax=ax, label="encoding value")
    ax.set_xlabel("dimension")
    ax.set_ylabel("position in the sequence")
    ax.set_title("Position encodings: every position gets its own pattern")
    return ax


def _layout_boxes(pieces, ids, line_width):
    """(boxes, rows, used width): x, row and width of every token box, in character widths."""
    pad, gap = 0.3, 0.3
    boxes, x, row, used = [], 0.0, 0, 0.0
    for piece, token_id in zip(pieces, ids):
        width = max(len(piece), 0.7 * len(str(token_id)), 1) + 2 * pad
        if x > 0 and x + width > line_width:
            x, row = 0.0, row + 1
        boxes.append((x, row, width))
        used = max(used, x + width)
        x += width + gap
    return boxes, row + 1, used


def _visible(piece):
    """A token's text with spaces, line breaks and tabs drawn as visible marks."""
    return "".join(VISIBLE_WHITESPACE.get(char, char) for char in piece)


def _overlap_note(stride, max_length):
    if stride < max_length:
        return f"a token is in up to {-(-max_length // stride)} inputs (overlap)"
    if stride == max_length:
        return "no overlap, no gap"
    return f"{stride - max_length} token(s) skipped between windows"


def _check_count(name, value, *, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}.")


def _check_encodings(values):
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 1:
        raise ValueError(f"encodings must have shape (num_positions, dim), got {tuple(values.shape)}.")
