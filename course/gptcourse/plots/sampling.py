"""Pictures of decoding and sampling, for chapter 06: draws against probabilities,
temperatures side by side, sorted probabilities with a top-k or top-p cut, the causal-mask
block of a KV-cache chunk, and the time per generated token.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from .style import MAX_FIGURE_WIDTH, UNIFORM_COLOUR, _as_numpy, _check_count

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


def plot_why_this_token(rows, ax=None, title=None):
    """The candidates for one generated token, before and after the filters: `rows` as
    gptcourse.chat.Conversation.why gives them, [(token text, probability before, after)], the
    last row "others". Returns the Axes."""
    labels = [repr(text) if text != "others" else "others" for text, _, _ in rows]
    before = np.array([row[1] for row in rows])
    after = np.array([row[2] for row in rows])
    if ax is None:
        _, ax = plt.subplots(figsize=(min(MAX_FIGURE_WIDTH, 7), 0.35 * len(rows) + 1), layout="constrained")
    positions = np.arange(len(rows))
    ax.barh(positions - 0.2, before, height=0.4, color=PROBABILITY_COLOUR, label="the model's probability")
    ax.barh(positions + 0.2, after, height=0.4, color=SAMPLE_COLOUR, label="after top-k, top-p, temperature")
    ax.set_yticks(positions, labels)
    ax.invert_yaxis()
    ax.set_xlabel("probability")
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    return ax
