"""The course's pictures: tokens and sliding windows (chapter 01), position encodings,
attention (weight heatmaps, several heads side by side, causal masks, dropout), and the parts
of a GPT model (chapter 04: the architecture with its tensor shapes, LayerNorm, activation
functions, gradient sizes with and without shortcuts, parameter counts, next-token
probabilities), pretraining (chapter 05: the probability of each target token, loss
curves with the tokens seen, the learning-rate schedule, gradient norms before and after
clipping, training runs compared, the speed of each step towards a fast GPU run), decoding (chapter 06: draws against probabilities,
temperatures side by side, sorted probabilities with a top-k or top-p cut, the causal-mask
block of a KV-cache chunk, time per generated token), and fine-tuning a GPT as a spam
classifier (chapter 07: messages per class, message lengths in tokens with the padding they
cost, loss and accuracy while fine-tuning, the confusion matrix), and fine-tuning it to follow
instructions (chapter 09: what the collate function made of a batch, the scores of the
model's responses).

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
from matplotlib.colors import ListedColormap, to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyBboxPatch, Patch, Rectangle
from matplotlib.ticker import MaxNLocator, PercentFormatter, StrMethodFormatter

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


# --- A GPT model (chapter 04): the architecture, LayerNorm, GELU, shortcuts, sizes ----------

ARCH_COLOURS = {
    "data": "#f0f0f0",  # light grey: token ids, positions, logits
    "embedding": "#c6dbef",  # pale blue
    "dropout": "#e5e5e5",  # grey
    "block": "#fdd0a2",  # pale orange: the transformer blocks
    "norm": "#c7e9c0",  # pale green: LayerNorm
    "attention": "#fdae6b",  # orange
    "feedforward": "#fdae6b",
    "head": "#dadaeb",  # pale purple: the output head
    "add": "white",
}
ROW_COLOURS = "tab10"  # one colour per row in the LayerNorm picture
ACTIVATION_COLOURS = {"GELU": "#d62728", "ReLU": "#1f77b4"}
NO_SHORTCUT_COLOUR = "#d62728"  # red: gradients that vanish
SHORTCUT_COLOUR = "#2ca02c"  # green: gradients that get through
BAR_COLOUR = "#6baed6"
MAX_TOP_TOKENS = 30


def plot_gpt_architecture(cfg, batch=2, num_tokens=4):
    """The data flow of a GPT model, with the tensor shape at every arrow; returns the Figure.

    ``cfg``: a configuration dict with ``vocab_size``, ``context_length``, ``emb_dim``,
    ``n_heads``, ``n_layers`` and ``drop_rate`` (such as ``GPT_CONFIG_124M``).
    ``batch``, ``num_tokens``: the shape ``(B, T)`` of the token ids that flow in.
    Left: the whole model, from token ids to logits. Right: the inside of one transformer
    block (pre-LayerNorm, two shortcut connections). Only the configuration is read: no
    model is built.
    """
    for key in ("vocab_size", "context_length", "emb_dim", "n_heads", "n_layers", "drop_rate"):
        if key not in cfg:
            raise ValueError(f"cfg has no {key!r}: give a configuration like GPT_CONFIG_124M.")
    _check_count("batch", batch, minimum=1)
    _check_count("num_tokens", num_tokens, minimum=1)
    if num_tokens > cfg["context_length"]:
        raise ValueError(f"num_tokens ({num_tokens}) is larger than the context length "
                         f"({cfg['context_length']}): the model cannot take that many tokens.")
    B, T = batch, num_tokens
    V, C, E = cfg["vocab_size"], cfg["context_length"], cfg["emb_dim"]
    H, L, p = cfg["n_heads"], cfg["n_layers"], cfg["drop_rate"]
    hidden = f"({B}, {T}, {E})"

    fig, ax = plt.subplots(figsize=(MAX_FIGURE_WIDTH, 9.0), layout="constrained")
    ax.set_xlim(0, 12.2)
    ax.set_ylim(0.2, 13.2)
    ax.axis("off")

    # The whole model, top to bottom, in the left column.
    mid = 2.9
    _arch_box(ax, mid - 1.35, 12.4, 2.5, 0.7, f"token ids\n{B} sequences × {T} tokens", "data", "ids")
    _arch_box(ax, mid + 1.45, 12.4, 1.9, 0.7, f"positions\n0, 1, …, {T - 1}", "data", "positions")
    _arch_box(ax, mid - 1.35, 10.6, 2.5, 0.85, f"token embedding\nEmbedding({V:,}, {E})", "embedding", "tok_emb")
    _arch_box(ax, mid + 1.45, 10.6, 2.5, 0.85, f"position embedding\nEmbedding({C:,}, {E})",
              "embedding", "pos_emb")
    _arch_arrow(ax, (mid - 1.35, 12.05), (mid - 1.35, 11.03), f"({B}, {T})")
    _arch_arrow(ax, (mid + 1.45, 12.05), (mid + 1.45, 11.03), f"({T},)")
    _arch_add(ax, mid, 9.3, "add-embeddings")
    _arch_arrow(ax, (mid - 1.35, 10.17), (mid - 0.2, 9.42), hidden, label_side="left", nudge=-0.15)
    _arch_arrow(ax, (mid + 1.45, 10.17), (mid + 0.2, 9.42), f"({T}, {E})", nudge=-0.15)
    _arch_box(ax, mid, 8.0, 2.6, 0.6, f"dropout (p = {p:g})", "dropout", "drop_emb")
    _arch_arrow(ax, (mid, 9.08), (mid, 8.3), hidden)
    block = _arch_box(ax, mid, 6.3, 3.6, 1.1, f"transformer block × {L}\n(one after another)", "block",
                      "trf_blocks", bold=True)
    _arch_arrow(ax, (mid, 7.7), (mid, 6.85), hidden)
    _arch_box(ax, mid, 4.6, 2.6, 0.6, "final LayerNorm", "norm", "final_norm")
    _arch_arrow(ax, (mid, 5.75), (mid, 4.9), hidden)
    _arch_box(ax, mid, 3.1, 3.4, 0.85, f"output head\nLinear({E}, {V:,}, bias=False)", "head", "out_head")
    _arch_arrow(ax, (mid, 4.3), (mid, 3.53), hidden)
    _arch_box(ax, mid, 1.2, 3.6, 0.85, f"logits: a score for each of the\n{V:,} tokens, at every position",
              "data", "logits")
    _arch_arrow(ax, (mid, 2.67), (mid, 1.63), f"({B}, {T}, {V})")

    # The inside of one block, on the right.
    left, right, top, bottom = 6.6, 12.1, 13.0, 0.5
    ax.add_patch(Rectangle((left, bottom), right - left, top - bottom, facecolor="#fff7ec",
                           edgecolor="#e6550d", linestyle="--", linewidth=1.2, gid="block-detail"))
    ax.text((left + right) / 2, top - 0.3, "inside one transformer block", ha="center", va="center",
            fontsize=11, fontweight="bold")
    for y in (block.get_y(), block.get_y() + block.get_height()):  # the zoom lines
        ax.plot([mid + 1.8, left], [y, bottom if y < 6.3 else top], color="#e6550d",
                linestyle=":", linewidth=1)
    x = 9.1
    steps = [  # (y, text, colour, gid, shape of the arrow into it)
        (12.05, f"input x {hidden}", "data", "block-in", None),
        (10.9, "LayerNorm 1", "norm", "norm1", hidden),
        (9.75, f"multi-head attention\n{H} heads × {E // H} features", "attention", "att", hidden),
        (8.55, f"dropout (p = {p:g})", "dropout", "drop-att", hidden),
    ]
    steps2 = [
        (6.4, "LayerNorm 2", "norm", "norm2", hidden),
        (5.15, f"feed-forward\n{E} → {4 * E} → {E}, GELU", "feedforward", "ff", hidden),
        (3.95, f"dropout (p = {p:g})", "dropout", "drop-ff", hidden),
    ]
    y_prev = _arch_column(ax, x, steps, None)
    _arch_add(ax, x, 7.5, "add-att")
    _arch_arrow(ax, (x, y_prev), (x, 7.72), hidden)
    _arch_shortcut(ax, x, 11.75, 7.5, "shortcut")
    y_prev = _arch_column(ax, x, steps2, 7.28)
    ax.text(x + 1.6, 5.15, f" inside:\n ({B}, {T}, {4 * E})", fontsize=8.5, family="monospace",
            color="#08519c", va="center", ha="left")
    _arch_add(ax, x, 2.9, "add-ff")
    _arch_arrow(ax, (x, y_prev), (x, 3.12), hidden)
    _arch_shortcut(ax, x, 7.3, 2.9, "shortcut")
    _arch_box(ax, x, 1.3, 3.0, 0.55, f"output {hidden}", "data", "block-out")
    _arch_arrow(ax, (x, 2.68), (x, 1.58), None)
    ax.set_title(f"A GPT model: {L} transformer blocks, {E} features per token, "
                 f"shapes for {B} sequences of {T} tokens", fontsize=12)
    return fig


def _arch_column(ax, x, steps, y_prev):
    """Boxes one under another at x, each joined to the one above (or to y_prev, when given)
    by an arrow labelled with its shape; returns the bottom edge of the last box."""
    for y, text, colour, gid, shape in steps:
        height = 0.8 if "\n" in text else 0.55
        _arch_box(ax, x, y, 3.0, height, text, colour, gid)
        if y_prev is not None:
            _arch_arrow(ax, (x, y_prev), (x, y + height / 2), shape)
        y_prev = y - height / 2
    return y_prev


def _arch_box(ax, x, y, width, height, text, kind, gid, bold=False):
    """A rounded box centred at (x, y) with its text; returns the patch."""
    box = FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                         boxstyle="round,pad=0.02,rounding_size=0.12", gid=f"box:{gid}",
                         facecolor=ARCH_COLOURS[kind], edgecolor="#636363",
                         linewidth=1.6 if bold else 0.9)
    ax.add_patch(box)
    ax.text(x, y, text, ha="center", va="center", fontsize=9.5,
            fontweight="bold" if bold else "normal")
    return box


def _arch_arrow(ax, start, end, label, label_side="right", nudge=0.0):
    """An arrow from start to end, with the tensor shape written beside it (``nudge``: moves
    the label up or down, away from a slanted arrow)."""
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "-|>", "color": "#252525",
                                                      "linewidth": 1.1, "shrinkA": 0, "shrinkB": 0},
                gid="arrow")
    if label:
        xm, ym = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + nudge
        offset = 0.12 if label_side == "right" else -0.12
        ax.text(xm + offset, ym, label, ha="left" if label_side == "right" else "right", va="center",
                fontsize=9, family="monospace", color="#08519c", gid="shape")


def _arch_add(ax, x, y, gid):
    """The ⊕ of an addition."""
    ax.add_patch(Circle((x, y), 0.22, facecolor=ARCH_COLOURS["add"], edgecolor="#252525",
                        linewidth=1.1, gid=f"box:{gid}"))
    ax.text(x, y, "+", ha="center", va="center", fontsize=13, fontweight="bold")


def _arch_shortcut(ax, x, y_from, y_to, label):
    """A shortcut line down the left side of the block's column, into an addition at y_to."""
    side = x - 2.0
    ax.plot([x, side, side], [y_from, y_from, y_to], color="#31a354", linewidth=1.6)
    ax.annotate("", xy=(x - 0.22, y_to), xytext=(side, y_to),
                arrowprops={"arrowstyle": "-|>", "color": "#31a354", "linewidth": 1.6,
                            "shrinkA": 0, "shrinkB": 0}, gid="shortcut")
    ax.text(side - 0.1, (y_from + y_to) / 2, label, rotation=90, ha="right", va="center",
            fontsize=9, color="#31a354")


def plot_layernorm_effect(before, after):
    """How the values of each row of ``before`` and ``after`` (both ``(rows, features)``) are
    spread: one smoothed density curve per row (a kernel density estimate), before
    LayerNorm on the left, after it on the right.

    The legend gives each row's mean and variance (biased, as LayerNorm computes them); a
    dashed line marks each row's mean. The function only draws: compute ``after`` with your
    own LayerNorm. Returns the Figure.
    """
    first, second = _as_numpy(before), _as_numpy(after)
    if first.ndim != 2 or first.shape[1] < 2:
        raise ValueError(f"before must have shape (rows, features) with 2 features or more, "
                         f"got {tuple(first.shape)}.")
    if second.shape != first.shape:
        raise ValueError(f"before and after must have the same shape, got {tuple(first.shape)} "
                         f"and {tuple(second.shape)}.")
    if len(first) > 10:
        raise ValueError(f"{len(first)} rows are too many to tell apart; plot at most 10 rows.")
    colours = sns.color_palette(ROW_COLOURS, n_colors=len(first))
    fig, axes = plt.subplots(1, 2, figsize=(MAX_FIGURE_WIDTH, 4.2), layout="constrained")
    for ax, values, name in ((axes[0], first, "before LayerNorm"), (axes[1], second, "after LayerNorm")):
        for row, colour in enumerate(colours):
            # round first, + 0.0: no "-0.00" for a mean that is 0 up to rounding
            mean, var = round(float(values[row].mean()), 2) + 0.0, values[row].var()
            label = f"row {row}: mean {mean:+.2f}, var {var:.2f}"
            if np.ptp(values[row]) > 0:
                sns.kdeplot(x=values[row], ax=ax, color=colour, linewidth=2, label=label)
            else:  # a constant row has no spread to smooth: a spike at its value
                ax.axvline(values[row][0], color=colour, linewidth=2, label=label)
            # Up to the top of the curves only, below the legend.
            ax.axvline(mean, ymax=1 / 1.5, color=colour, linestyle="--", linewidth=1)
        ax.set_xlabel("activation value")
        ax.set_ylabel("density")
        ax.set_title(name)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.5)  # headroom for the legend above the curves
        ax.legend(fontsize=8, loc="upper right", frameon=False)
    return fig


def plot_activation_functions(x, values, derivatives):
    """Activation functions (left) and their derivatives (right), one line each.

    ``x``: the inputs, a 1-d tensor or array. ``values`` and ``derivatives``: dicts
    ``{name: outputs}`` with one entry per function, each output of the same length as
    ``x`` (compute the derivatives with autograd). Returns the Figure.
    """
    xs = _as_numpy(x)
    if xs.ndim != 1 or len(xs) < 2:
        raise ValueError(f"x must be a 1-d sequence of inputs, got shape {tuple(xs.shape)}.")
    if not values:
        raise ValueError("values is empty: give at least one function, such as {'GELU': gelu(x)}.")
    if set(values) != set(derivatives):
        raise ValueError(f"values and derivatives must name the same functions, got {sorted(values)} "
                         f"and {sorted(derivatives)}.")
    fig, axes = plt.subplots(1, 2, figsize=(MAX_FIGURE_WIDTH, 4.0), layout="constrained")
    for ax, curves, title, ylabel in ((axes[0], values, "the functions", "f(x)"),
                                      (axes[1], derivatives, "their derivatives", "f′(x)")):
        for index, (name, ys) in enumerate(curves.items()):
            ys = _as_numpy(ys)
            if ys.shape != xs.shape:
                raise ValueError(f"{name}: {tuple(ys.shape)} values for {len(xs)} inputs.")
            colour = ACTIVATION_COLOURS.get(name, f"C{index + 2}")
            ax.plot(xs, ys, color=colour, linewidth=2, label=name)
        ax.axhline(0, color="#bdbdbd", linewidth=0.8, zorder=0)
        ax.axvline(0, color="#bdbdbd", linewidth=0.8, zorder=0)
        ax.set_xlabel("input x")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(frameon=False)
    return fig


def plot_gradient_magnitudes(gradients, ax=None):
    """Gradient size per layer, one line per network, on a log scale; returns the Axes.

    ``gradients``: ``{label: [value of layer 0, layer 1, ...]}``, e.g. the mean absolute
    gradient of each layer's weight matrix in a network without and with shortcuts.
    Layer 0 is the one nearest the input.
    """
    if not gradients:
        raise ValueError("gradients is empty: give {label: [one value per layer]}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.2), layout="constrained")
    palette = [NO_SHORTCUT_COLOUR, SHORTCUT_COLOUR] + [f"C{i}" for i in range(3, 10)]
    for (label, values), colour in zip(gradients.items(), palette):
        values = np.ravel(_as_numpy(values))
        if np.any(values <= 0):
            raise ValueError(f"{label}: gradient sizes must be positive for a log scale.")
        ax.plot(np.arange(len(values)), values, marker="o", linewidth=2, color=colour, label=label)
    ax.set_yscale("log")
    longest = max(len(np.ravel(_as_numpy(v))) for v in gradients.values())
    ax.set_xticks(range(longest))
    ax.set_xlabel("layer (0 = nearest the input)")
    ax.set_ylabel("mean |gradient| of the weights\n(log scale)")
    ax.grid(True, which="major", axis="y", color="#e0e0e0")
    ax.legend(frameon=False)
    ax.set_title("Gradient size per layer")
    return ax


def plot_parameter_counts(counts, *, bytes_per_parameter=4, title=None, ax=None):
    """Horizontal bars of parameter counts, each labelled with its number and its memory.

    ``counts``: ``{name: number of parameters}``, drawn top to bottom in that order.
    ``bytes_per_parameter``: 4 for float32 (2 for float16 or bfloat16). Returns the Axes.
    """
    if not counts:
        raise ValueError("counts is empty: give {name: number of parameters}.")
    names, numbers = list(counts), [int(n) for n in counts.values()]
    if any(n < 0 for n in numbers):
        raise ValueError("parameter counts cannot be negative.")
    if ax is None:
        _, ax = plt.subplots(figsize=(MAX_FIGURE_WIDTH, 0.9 + 0.5 * len(names)), layout="constrained")
    positions = np.arange(len(names))
    millions = np.array(numbers) / 1e6
    ax.barh(positions, millions, color=BAR_COLOUR, edgecolor="#3182bd")
    largest = max(millions.max(), 1e-9)
    for position, number, value in zip(positions, numbers, millions):
        ax.text(value + 0.01 * largest, position, f" {number:,}  ({_memory(number * bytes_per_parameter)})",
                va="center", fontsize=9)
    ax.set_yticks(positions, names)
    ax.invert_yaxis()  # the first entry at the top
    ax.set_xlim(0, largest * 1.45)  # room for the labels
    ax.set_xlabel("parameters (millions)")
    ax.set_title(title or f"Parameters (memory at {bytes_per_parameter} bytes each)")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def plot_next_token_probabilities(probs, tokenizer=None, *, top_k=10, title=None):
    """A model's next-token distribution: all probabilities sorted (left, log scale) and the
    ``top_k`` most likely tokens (right). A dashed line marks the uniform 1 / vocabulary size.

    ``probs``: a 1-d tensor of probabilities over the vocabulary (softmax of the last
    position's logits). ``tokenizer``: to write the top tokens as text (ids otherwise).
    Returns the Figure.
    """
    values = _as_numpy(probs)
    if values.ndim != 1 or len(values) < 2:
        raise ValueError(f"probs must be a 1-d vector over the vocabulary, got shape {tuple(values.shape)}.")
    if np.any(values < 0) or not np.isclose(values.sum(), 1.0, atol=1e-3):
        raise ValueError("probs must be probabilities (non-negative, summing to 1): apply softmax first.")
    _check_count("top_k", top_k, minimum=1)
    if top_k > min(MAX_TOP_TOKENS, len(values)):
        raise ValueError(f"top_k must be at most {min(MAX_TOP_TOKENS, len(values))}, got {top_k}.")
    uniform = 1.0 / len(values)
    order = np.argsort(-values, kind="stable")
    fig, (left, right) = plt.subplots(1, 2, figsize=(MAX_FIGURE_WIDTH, 4.2), layout="constrained",
                                      gridspec_kw={"width_ratios": [1.2, 1]})
    left.plot(np.arange(1, len(values) + 1), values[order], color=BAR_COLOUR, linewidth=2,
              label="sorted probabilities")
    left.axhline(uniform, color="#d62728", linestyle="--", linewidth=1.2,
                 label=f"uniform: 1 / {len(values):,} = {uniform:.2e}")
    left.set_yscale("log")
    left.set_xlabel("rank of the token (1 = most likely)")
    left.set_ylabel("probability (log scale)")
    left.set_title(f"all {len(values):,} tokens")
    left.legend(frameon=False, fontsize=9)

    top = order[:top_k]
    labels = [repr(tokenizer.decode([int(i)])) if tokenizer is not None else str(int(i)) for i in top]
    right.barh(np.arange(top_k), values[top], color=BAR_COLOUR, edgecolor="#3182bd")
    right.axvline(uniform, color="#d62728", linestyle="--", linewidth=1.2)
    right.set_yticks(np.arange(top_k), labels, family="monospace", fontsize=9)
    right.invert_yaxis()
    right.set_xlabel("probability")
    right.set_title(f"the {top_k} most likely next tokens")
    right.ticklabel_format(axis="x", style="sci", scilimits=(-2, 2))
    if title:
        fig.suptitle(title)
    return fig


def _memory(num_bytes):
    """'621.83 MB' (1 MB = 1024**2 bytes), or GB from 1024 MB on."""
    megabytes = num_bytes / 1024**2
    if megabytes >= 1024:
        return f"{megabytes / 1024:.2f} GB"
    if megabytes >= 0.1:
        return f"{megabytes:.2f} MB"
    return f"{num_bytes / 1024:.1f} KB"


# --- Pretraining (chapter 05): target probabilities, loss curves, learning rate, clipping ----

TRAIN_COLOUR = "#1f77b4"  # blue: the training loss
VAL_COLOUR = "#d62728"  # red: the validation loss
UNIFORM_COLOUR = "#7f7f7f"  # grey: what a model that knows nothing would give
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


# --- Decoding and sampling (chapter 06): samples, temperature, top-k / top-p, the KV cache ---

PROBABILITY_COLOUR = "#6baed6"  # blue: a probability
SAMPLE_COLOUR = "#fd8d3c"  # orange: the share of draws that gave a token
REMOVED_COLOUR = "#d9d9d9"  # light grey: a token a filter removed
CUMULATIVE_COLOUR = "#252525"  # near black: the running total of the sorted probabilities
CACHED_KEY_COLOUR = "#6baed6"  # blue: a key (and value) that comes from the cache
NEW_KEY_COLOUR = "#fd8d3c"  # orange: a key of the chunk itself
FUTURE_COLOUR = "#3b3b3b"  # dark grey: a later key, masked out
OUTSIDE_VISIBLE_COLOUR = "#ebebeb"  # the rest of the mask buffer, not used by this call
OUTSIDE_HIDDEN_COLOUR = "#bdbdbd"
TIMING_COLOURS = ("#d62728", "#2ca02c", "#9467bd", "#ff7f0e")  # red first: the slow run
MAX_SAMPLING_TOKENS = 30  # more bars than this no longer read at notebook width
MAX_CACHE_POSITIONS = 24  # the same for the rows and columns of the KV-cache mask


def plot_samples_vs_probabilities(probs, counts, labels, *, ax=None, title=None):
    """Each token's probability and the share of draws that gave it, side by side; returns
    the Axes.

    ``probs``: 1-d probabilities (a softmax). ``counts``: how many of the draws gave each
    token (``torch.bincount(samples, minlength=len(probs))``). ``labels``: one label per
    token. The number of draws is written above each orange bar: with more draws the orange
    bars close in on the blue ones.
    """
    values, drawn = _distribution_and_counts(probs, counts, labels)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(MAX_FIGURE_WIDTH, 2.5 + 0.75 * len(values)), 4.0), layout="constrained")
    _probability_bars(ax, values, drawn, labels)
    ax.legend(frameon=False, loc="upper left")
    ax.set_title(title or f"{int(drawn.sum()):,} draws against the probabilities they were drawn from")
    return ax


def plot_temperature_distributions(probs_by_temperature, labels, *, counts_by_temperature=None, title=None):
    """One panel per temperature: the probabilities of each token (blue) and, when given,
    the share of draws that gave it (orange); returns the Figure.

    ``probs_by_temperature``: ``{temperature: 1-d probabilities}`` (at most 4), the softmax
    of the same logits divided by each temperature. ``counts_by_temperature``: the same
    keys, the number of draws of each token. All panels share the y axis from 0 to 1, and a
    dashed line marks the uniform ``1 / number of tokens`` that a very high temperature
    approaches.
    """
    if not probs_by_temperature:
        raise ValueError("probs_by_temperature is empty: give {temperature: probabilities}.")
    if len(probs_by_temperature) > 4:
        raise ValueError(f"at most 4 temperatures fit side by side, got {len(probs_by_temperature)}.")
    if counts_by_temperature is not None and list(counts_by_temperature) != list(probs_by_temperature):
        raise ValueError("counts_by_temperature must have the same temperatures, in the same order, "
                         "as probs_by_temperature.")
    for temperature in probs_by_temperature:
        if not temperature > 0:
            raise ValueError(f"temperatures must be positive, got {temperature!r}.")
    fig, axes = plt.subplots(1, len(probs_by_temperature), figsize=(MAX_FIGURE_WIDTH, 4.2), layout="constrained",
                             sharey=True, squeeze=False)
    for ax, (temperature, probs) in zip(axes[0], probs_by_temperature.items()):
        counts = None if counts_by_temperature is None else counts_by_temperature[temperature]
        values, drawn = _distribution_and_counts(probs, counts, labels)
        _probability_bars(ax, values, drawn, labels, rotate=True)
        ax.axhline(1 / len(values), color=UNIFORM_COLOUR, linestyle="--", linewidth=1.0,
                   label=f"uniform: 1 / {len(values)}")
        ax.set_title(f"T = {temperature:g}: largest p = {values.max():.3f}", fontsize=10)
        if ax is not axes[0][0]:
            ax.set_ylabel("")
    axes[0][0].set_ylim(0, 1.12)  # room for the counts above a bar near 1
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=len(handles), frameon=False, fontsize=9)
    fig.suptitle(title or "Softmax with a temperature: the same logits divided by T")
    return fig


def plot_sorted_probabilities(probs, labels=None, *, tokenizer=None, kept=None, p=None, k=None, max_tokens=20,
                              ax=None, title=None):
    """The most probable tokens, sorted, with the cumulative probability and the cut of a
    top-k or top-p filter; returns the Axes.

    ``probs``: 1-d probabilities over the vocabulary. ``labels`` (one per token) or
    ``tokenizer`` (to decode the ids) name the bars; ids otherwise. ``kept``: a boolean mask
    over the vocabulary, True for the tokens a filter kept (``torch.isfinite(filtered)``);
    kept bars are blue, removed ones grey, and a vertical line marks the cut. ``p``: a dashed
    line at the mass top-p must reach. ``k``: named in the cut's label. Only the
    ``max_tokens`` most probable tokens are drawn; a cut further down is written out.
    """
    values = _as_numpy(probs)
    if values.ndim != 1 or len(values) < 2:
        raise ValueError(f"probs must be a 1-d vector of probabilities, got shape {tuple(values.shape)}.")
    if np.any(values < 0) or not np.isclose(values.sum(), 1.0, atol=1e-3):
        raise ValueError("probs must be probabilities (non-negative, summing to 1): apply softmax first.")
    _check_count("max_tokens", max_tokens, minimum=1)
    if max_tokens > MAX_SAMPLING_TOKENS:
        raise ValueError(f"max_tokens must be at most {MAX_SAMPLING_TOKENS}, got {max_tokens}.")
    if labels is not None and len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} probabilities.")
    if p is not None and not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p!r}.")
    if k is not None:
        _check_count("k", k, minimum=1)
    keep = np.ones(len(values), dtype=bool) if kept is None else np.asarray(_as_numpy(kept), dtype=bool)
    if keep.shape != values.shape:
        raise ValueError(f"kept must be a mask of shape {values.shape}, got {keep.shape}.")
    if not keep.any():
        raise ValueError("kept marks no token at all: a filter must keep at least one.")

    order = np.argsort(-values, kind="stable")
    shown = order[:max_tokens]
    cumulative = np.cumsum(values[order])[:len(shown)]
    if ax is None:
        _, ax = plt.subplots(figsize=(min(MAX_FIGURE_WIDTH, 3.0 + 0.45 * len(shown)), 4.2), layout="constrained")
    positions = np.arange(len(shown))
    colours = [PROBABILITY_COLOUR if keep[i] else REMOVED_COLOUR for i in shown]
    ax.bar(positions, values[shown], color=colours, edgecolor="#636363", linewidth=0.6)
    ax.plot(positions, cumulative, color=CUMULATIVE_COLOUR, marker="o", markersize=3.5, linewidth=1.5,
            label="cumulative probability")
    if p is not None:
        ax.axhline(p, color=CUMULATIVE_COLOUR, linestyle="--", linewidth=1.0, label=f"p = {p:g}")

    num_kept = int(keep.sum())
    is_prefix = bool(keep[order[:num_kept]].all())  # the kept tokens are the most probable ones
    what = f"k = {k}: " if k is not None else (f"p = {p:g}: " if p is not None else "")
    if is_prefix and num_kept < len(shown):
        ax.axvline(num_kept - 0.5, color="#d62728", linewidth=2,
                   label=f"cut: {what}{num_kept} kept, {len(values) - num_kept:,} removed")
    elif is_prefix:
        ax.text(0.98, 0.74, f"cut after rank {num_kept:,} ({what.rstrip(': ')}),\nbeyond the {len(shown)} shown",
                transform=ax.transAxes, ha="right", va="center", fontsize=9, color="#d62728")  # above the legend
    handles, _ = ax.get_legend_handles_labels()
    handles.insert(0, Patch(facecolor=PROBABILITY_COLOUR, edgecolor="#636363", label="kept"))
    if not keep[shown].all():
        handles.insert(1, Patch(facecolor=REMOVED_COLOUR, edgecolor="#636363", label="removed (logit set to −inf)"))
    ax.legend(handles=handles, frameon=False, fontsize=8.5, loc="center right")

    if labels is not None:
        names = [str(labels[i]) for i in shown]
    elif tokenizer is not None:
        names = [repr(tokenizer.decode([int(i)])) for i in shown]
    else:
        names = [str(int(i)) for i in shown]
    ax.set_xticks(positions, names, rotation=90 if len(shown) > 6 or max(map(len, names)) > 8 else 0,
                  family="monospace", fontsize=9)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("token, most probable first" + (f" (the top {len(shown)} of {len(values):,})"
                                                   if len(shown) < len(values) else ""))
    ax.set_ylabel("probability")
    ax.set_title(title or "Sorted probabilities and their running total")
    return ax


def plot_kv_cache_mask(cached, new, *, context_length=None, ax=None, title=None, legend=True):
    """The causal mask a KV-cache attention uses when ``new`` tokens arrive after ``cached``
    tokens; returns the Axes.

    The whole mask buffer (``context_length`` positions, or just the ones in use) is drawn
    faintly; the part this call uses, rows ``cached`` to ``cached + new - 1`` (the queries of
    the chunk) and columns ``0`` to ``cached + new - 1`` (every key so far), is framed and
    coloured: keys from the cache blue, keys of the chunk itself orange, later keys (hidden
    by the mask) dark. ``legend=False`` leaves the legend out (``plot_kv_cache_masks`` draws
    one for all its panels).
    """
    _check_count("cached", cached, minimum=0)
    _check_count("new", new, minimum=1)
    end = cached + new
    size = end if context_length is None else context_length
    _check_count("context_length", size, minimum=1)
    if size < end:
        raise ValueError(f"{cached} cached + {new} new tokens do not fit a context_length of {size}.")
    if size > MAX_CACHE_POSITIONS:
        raise ValueError(f"at most {MAX_CACHE_POSITIONS} positions make a readable picture, got {size}.")
    rows, columns = np.indices((size, size))
    future = columns > rows
    in_use = (rows >= cached) & (rows < end) & (columns < end)
    codes = np.where(future, 1, 0)  # outside the part in use: 0 visible, 1 hidden
    codes = np.where(in_use & ~future & (columns < cached), 2, codes)  # a key from the cache
    codes = np.where(in_use & ~future & (columns >= cached), 3, codes)  # a key of the chunk
    codes = np.where(in_use & future, 4, codes)  # a later key of the chunk, masked
    colours = [OUTSIDE_VISIBLE_COLOUR, OUTSIDE_HIDDEN_COLOUR, CACHED_KEY_COLOUR, NEW_KEY_COLOUR, FUTURE_COLOUR]
    if ax is None:
        side = min(0.42 * size + 1.8, 7.0)
        _, ax = plt.subplots(figsize=(side + (3.4 if legend else 0.3), side), layout="constrained")
    ax.imshow(codes, cmap=ListedColormap(colours), vmin=-0.5, vmax=4.5, interpolation="nearest")
    ax.set_xticks(np.arange(size + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(size + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    ax.set_xticks(np.arange(size))
    ax.set_yticks(np.arange(size))
    ax.tick_params(axis="both", labelsize=8)
    ax.add_patch(Rectangle((-0.5, cached - 0.5), end, new, fill=False, edgecolor="black", linewidth=2.5))
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    if legend:
        ax.legend(handles=_kv_cache_legend(), loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                  fontsize=8.5)
    ax.set_title(title or f"{new} new after {cached} cached: mask[{cached}:{end}, :{end}]", fontsize=10)
    return ax


def plot_kv_cache_masks(chunks, *, context_length=None, title=None):
    """``plot_kv_cache_mask`` for several calls side by side, with one legend; returns the
    Figure. ``chunks``: ``[(cached, new), ...]`` (at most 3), e.g. a prompt of 4 tokens, then
    a chunk of 3, then 1 token: ``[(0, 4), (4, 3), (7, 1)]``. ``context_length``: the size of
    the mask buffer drawn (by default the largest ``cached + new``).
    """
    if not chunks:
        raise ValueError("chunks is empty: give [(cached, new), ...].")
    if len(chunks) > 3:
        raise ValueError(f"at most 3 panels fit side by side, got {len(chunks)}.")
    for chunk in chunks:
        if len(chunk) != 2:
            raise ValueError(f"each chunk is (cached, new), got {chunk!r}.")
    size = context_length if context_length is not None else max(cached + new for cached, new in chunks)
    fig, axes = plt.subplots(1, len(chunks), figsize=(MAX_FIGURE_WIDTH, min(MAX_FIGURE_WIDTH / len(chunks), 4.6) + 0.9),
                             layout="constrained", squeeze=False)
    for ax, (cached, new) in zip(axes[0], chunks):
        plot_kv_cache_mask(cached, new, context_length=size, ax=ax, legend=False)
    fig.legend(handles=_kv_cache_legend(), loc="outside lower center", ncols=3, frameon=False, fontsize=9)
    fig.suptitle(title or "The rows and columns of the causal mask that each call uses")
    return fig


def _kv_cache_legend():
    return [Patch(facecolor=CACHED_KEY_COLOUR, label="key from the cache"),
            Patch(facecolor=NEW_KEY_COLOUR, label="key of this chunk"),
            Patch(facecolor=FUTURE_COLOUR, label="later key: masked (−inf)"),
            Patch(facecolor="white", edgecolor="black", linewidth=2, label="framed: the part of the mask used now"),
            Patch(facecolor=OUTSIDE_HIDDEN_COLOUR, label="rest of the mask buffer (not used now)")]


def plot_time_per_token(runs, *, ax=None, title=None, smooth=15):
    """The time to generate each token against its position, one colour per run; returns
    the Axes.

    ``runs``: ``{label: (positions, seconds)}``, the position of each generated token (the
    number of tokens before it) and the time its step took. A run with at least
    ``4 * smooth`` times (every position of a generation) is drawn as faint dots with a line
    through the running median of ``smooth`` neighbours, which the occasional slow step of a
    busy machine does not move; a shorter run (a few positions, each measured on its own) as
    dots joined by a line.
    """
    if not runs:
        raise ValueError("runs is empty: give {label: (positions, seconds)}.")
    if len(runs) > len(TIMING_COLOURS):
        raise ValueError(f"at most {len(TIMING_COLOURS)} runs fit one readable picture, got {len(runs)}.")
    _check_count("smooth", smooth, minimum=1)
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.4), layout="constrained")
    highest = 0.0
    for (label, run), colour in zip(runs.items(), TIMING_COLOURS):
        if len(run) != 2:
            raise ValueError(f"{label}: give (positions, seconds).")
        positions, seconds = (np.ravel(_as_numpy(v)) for v in run)
        if len(positions) == 0 or len(positions) != len(seconds):
            raise ValueError(f"{label}: {len(positions)} positions and {len(seconds)} times; give one time per position.")
        if np.any(seconds < 0):
            raise ValueError(f"{label}: a time cannot be negative.")
        millis = 1e3 * seconds
        if len(millis) >= 4 * smooth:
            ax.plot(positions, millis, color=colour, marker="o", markersize=2.5, linestyle="none", alpha=0.35)
            half = smooth // 2
            median = np.array([np.median(millis[max(0, i - half):i + half + 1]) for i in range(len(millis))])
            ax.plot(positions, median, color=colour, linewidth=2.2, label=label)
            # The scale follows the median line: a few slow steps of a busy machine would
            # otherwise squash it (they are drawn, but may lie above the top).
            highest = max(highest, 1.3 * float(median.max()))
        else:
            ax.plot(positions, millis, color=colour, marker="o", markersize=5, linewidth=2.2, label=label)
            highest = max(highest, float(millis.max()))
    ax.set_xlabel("position of the generated token (tokens before it)")
    ax.set_ylabel("time for this token (ms)")
    ax.set_ylim(0, highest * 1.15)
    ax.grid(True, axis="y", color="#eeeeee")
    ax.legend(frameon=False, loc="upper left")
    ax.set_title(title or "Time per generated token")
    return ax


def _distribution_and_counts(probs, counts, labels):
    """probs as a checked 1-d array, and counts as one (or None)."""
    values = _as_numpy(probs)
    if values.ndim != 1 or len(values) < 2:
        raise ValueError(f"probs must be a 1-d vector of probabilities, got shape {tuple(values.shape)}.")
    if len(values) > MAX_SAMPLING_TOKENS:
        raise ValueError(f"at most {MAX_SAMPLING_TOKENS} tokens make readable bars, got {len(values)}.")
    if np.any(values < 0) or not np.isclose(values.sum(), 1.0, atol=1e-3):
        raise ValueError("probs must be probabilities (non-negative, summing to 1): apply softmax first.")
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} probabilities.")
    if counts is None:
        return values, None
    drawn = _as_numpy(counts)
    if drawn.shape != values.shape:
        raise ValueError(f"counts must have one entry per token, shape {values.shape}, got {drawn.shape}.")
    if np.any(drawn < 0) or np.any(drawn != np.round(drawn)) or drawn.sum() == 0:
        raise ValueError("counts must be whole numbers of draws, not negative, and not all 0.")
    return values, drawn


def _probability_bars(ax, values, drawn, labels, rotate=False):
    """Blue probability bars, and orange share-of-draws bars beside them when drawn is given."""
    positions = np.arange(len(values))
    width = 0.4 if drawn is not None else 0.7
    offset = width / 2 if drawn is not None else 0.0
    ax.bar(positions - offset, values, width, color=PROBABILITY_COLOUR, label="probability")
    if drawn is not None:
        total = drawn.sum()
        ax.bar(positions + offset, drawn / total, width, color=SAMPLE_COLOUR, label=f"share of {int(total):,} draws")
        for position, count in zip(positions, drawn):
            ax.text(position + offset, count / total + 0.01, f"{int(count)}", ha="center", va="bottom",
                    fontsize=7.5 if rotate else 8.5)
    ax.set_xticks(positions, [str(label) for label in labels], rotation=90 if rotate else 0, fontsize=9)
    ax.set_ylabel("probability" + (" / share of draws" if drawn is not None else ""))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("next token")


# --- Fine-tuning for classification (chapter 07): classes, lengths, training, confusion -----

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


# --- Instruction fine-tuning (chapter 09): a collated batch, scores of the responses ---------

BATCH_TOKEN_COLOUR = "#56b4e9"  # sky blue: a token of an instruction example (input or target)
BATCH_PADDING_COLOUR = "#949494"  # grey: padding in the inputs
BATCH_END_COLOUR = "#de8f05"  # orange: the one end-of-text target the model learns to predict
BATCH_IGNORED_COLOUR = "#3b3b3b"  # dark grey: a target the loss ignores, like the masked future above
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
