"""Pictures of the parts of a GPT model, for chapter 04: the architecture with the tensor
shape at every arrow, LayerNorm, activation functions (GELU and ReLU), gradient sizes with and
without shortcut connections, parameter counts, and next-token probabilities.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.patches import Circle, FancyBboxPatch, Rectangle

from .style import BAR_COLOUR, MAX_FIGURE_WIDTH, _as_numpy, _check_count

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
