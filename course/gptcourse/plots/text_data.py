"""Pictures of text data, for chapter 01: a text drawn as its tokens, the sliding windows
that cut a token stream into inputs and targets, and position encodings (as lines and as a
heatmap).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch, Rectangle

from .style import MAX_FIGURE_WIDTH, _as_numpy, _check_count

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


def _check_encodings(values):
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 1:
        raise ValueError(f"encodings must have shape (num_positions, dim), got {tuple(values.shape)}.")
