"""Tests of the chapter-06 pictures in gptcourse.plots: draws against probabilities, softmax at
several temperatures, sorted probabilities with the cut of top-k or top-p, the causal mask a
KV-cache attention uses for a chunk, and the time per generated token."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # draw into memory: no window, works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from gptcourse import plots  # noqa: E402

# The book's toy example: nine words and the logits of the next one.
WORDS = ["closer", "every", "effort", "forward", "inches", "moves", "pizza", "toward", "you"]
LOGITS = torch.tensor([4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79])
COUNTS = torch.tensor([73, 0, 0, 582, 2, 0, 0, 343, 0])  # 1,000 draws at T = 1 after torch.manual_seed(123)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def bars(ax, colour=None):
    """The bars of an Axes (Rectangles added by ax.bar), of one colour if given."""
    found = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() < 1.0]
    if colour is not None:
        found = [p for p in found if to_hex(p.get_facecolor()) == to_hex(colour)]
    return found


def legend_texts(legend):
    return [t.get_text() for t in legend.get_texts()]


# --- plot_samples_vs_probabilities ----------------------------------------------------------


def test_samples_vs_probabilities_pairs_a_probability_bar_with_a_share_of_draws():
    probs = torch.softmax(LOGITS, dim=0).requires_grad_()  # must detach

    ax = plots.plot_samples_vs_probabilities(probs, COUNTS, WORDS)

    assert isinstance(ax, Axes)
    blue, orange = bars(ax, plots.PROBABILITY_COLOUR), bars(ax, plots.SAMPLE_COLOUR)
    assert len(blue) == len(orange) == 9
    assert [b.get_height() for b in blue] == pytest.approx(probs.tolist())
    assert [b.get_height() for b in orange] == pytest.approx((COUNTS / 1000).tolist())
    for left, right in zip(blue, orange):  # side by side, the draws to the right
        assert right.get_x() == pytest.approx(left.get_x() + left.get_width())
    assert [t.get_text() for t in ax.texts] == [str(c) for c in COUNTS.tolist()]
    assert [t.get_text() for t in ax.get_xticklabels()] == WORDS
    assert legend_texts(ax.get_legend()) == ["probability", "share of 1,000 draws"]
    assert "1,000 draws" in ax.get_title()
    assert ax.get_xlabel() == "next token" and "probability" in ax.get_ylabel()


@pytest.mark.parametrize(
    ("probs", "counts", "labels", "message"),
    [
        (torch.tensor([0.5, 0.6]), torch.tensor([1, 1]), ["a", "b"], "summing to 1"),
        (torch.tensor([[0.5, 0.5]]), torch.tensor([1, 1]), ["a", "b"], "1-d"),
        (torch.tensor([0.5, 0.5]), torch.tensor([1, 1, 1]), ["a", "b"], "one entry per token"),
        (torch.tensor([0.5, 0.5]), torch.tensor([1.5, 1.0]), ["a", "b"], "whole numbers"),
        (torch.tensor([0.5, 0.5]), torch.tensor([0, 0]), ["a", "b"], "not all 0"),
        (torch.tensor([0.5, 0.5]), torch.tensor([1, 1]), ["a"], "1 labels for 2"),
        (torch.full((31,), 1 / 31), torch.ones(31), [str(i) for i in range(31)], "at most 30"),
    ],
)
def test_samples_vs_probabilities_rejects_bad_arguments(probs, counts, labels, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_samples_vs_probabilities(probs, counts, labels)


# --- plot_temperature_distributions ---------------------------------------------------------


def test_temperature_distributions_one_panel_per_temperature_sharing_the_y_axis():
    temperatures = (0.1, 1, 5)
    probs = {t: torch.softmax(LOGITS / t, dim=0) for t in temperatures}
    counts = {t: torch.tensor([0, 0, 0, 985, 0, 0, 0, 15, 0]) if t == 0.1 else COUNTS for t in temperatures}

    fig = plots.plot_temperature_distributions(probs, WORDS, counts_by_temperature=counts)

    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    for ax, t in zip(fig.axes, temperatures):
        blue, orange = bars(ax, plots.PROBABILITY_COLOUR), bars(ax, plots.SAMPLE_COLOUR)
        assert len(blue) == len(orange) == 9
        assert [b.get_height() for b in blue] == pytest.approx(probs[t].tolist(), abs=1e-6)
        assert ax.get_title().startswith(f"T = {t:g}: largest p = {probs[t].max().item():.3f}")
        assert [label.get_text() for label in ax.get_xticklabels()] == WORDS
        uniform = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert uniform and uniform[0].get_ydata()[0] == pytest.approx(1 / 9)
        assert ax.get_ylim() == fig.axes[0].get_ylim()  # one scale: the panels compare
    assert fig.axes[0].get_ylim()[1] >= 1.0
    assert fig.axes[0].get_title().endswith("0.991")  # T = 0.1: almost all on "forward"
    assert legend_texts(fig.legends[0]) == ["uniform: 1 / 9", "probability", "share of 1,000 draws"]


def test_temperature_distributions_without_draws_has_only_probability_bars():
    fig = plots.plot_temperature_distributions({2.0: torch.softmax(LOGITS / 2, dim=0)}, WORDS)
    (ax,) = fig.axes
    assert len(bars(ax, plots.PROBABILITY_COLOUR)) == 9 and not bars(ax, plots.SAMPLE_COLOUR)
    assert not ax.texts


@pytest.mark.parametrize(
    ("probs", "counts", "message"),
    [
        ({}, None, "empty"),
        ({t: torch.full((9,), 1 / 9) for t in (0.5, 1, 2, 3, 4)}, None, "at most 4"),
        ({0: torch.full((9,), 1 / 9)}, None, "positive"),
        ({1: torch.full((9,), 1 / 9)}, {2: COUNTS}, "same temperatures"),
    ],
)
def test_temperature_distributions_rejects_bad_arguments(probs, counts, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_temperature_distributions(probs, WORDS, counts_by_temperature=counts)


# --- plot_sorted_probabilities --------------------------------------------------------------


def test_sorted_probabilities_top_k_colours_the_kept_and_marks_the_cut():
    probs = torch.softmax(LOGITS, dim=0)
    kept = LOGITS >= 4.51  # top-3: forward, toward, closer

    ax = plots.plot_sorted_probabilities(probs, WORDS, kept=kept, k=3, max_tokens=9)

    heights = [b.get_height() for b in bars(ax)]
    assert heights == pytest.approx(sorted(probs.tolist(), reverse=True))
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["forward", "toward", "closer"]
    colours = [to_hex(b.get_facecolor()) for b in bars(ax)]
    assert colours == [to_hex(plots.PROBABILITY_COLOUR)] * 3 + [to_hex(plots.REMOVED_COLOUR)] * 6
    cumulative = [line for line in ax.get_lines() if line.get_label() == "cumulative probability"]
    np.testing.assert_allclose(cumulative[0].get_ydata(), np.cumsum(sorted(probs.tolist(), reverse=True)), rtol=1e-6)
    cut = [line for line in ax.get_lines() if line.get_label().startswith("cut")]
    assert len(cut) == 1 and list(cut[0].get_xdata()) == [2.5, 2.5]
    assert cut[0].get_label() == "cut: k = 3: 3 kept, 6 removed"
    assert legend_texts(ax.get_legend())[:2] == ["kept", "removed (logit set to −inf)"]
    assert ax.get_ylabel() == "probability" and "most probable first" in ax.get_xlabel()


def test_sorted_probabilities_top_p_draws_the_threshold_and_the_cut():
    probs = torch.softmax(LOGITS / 5, dim=0)  # flat: 7 tokens before the mass reaches 0.9
    sorted_probs, order = torch.sort(probs, descending=True)
    kept = torch.zeros(9, dtype=torch.bool)
    kept[order[:7]] = True

    ax = plots.plot_sorted_probabilities(probs, WORDS, kept=kept, p=0.9, max_tokens=9)

    threshold = [line for line in ax.get_lines() if line.get_label() == "p = 0.9"]
    assert threshold and threshold[0].get_ydata()[0] == pytest.approx(0.9)
    cut = [line for line in ax.get_lines() if line.get_label().startswith("cut")]
    assert list(cut[0].get_xdata()) == [6.5, 6.5] and cut[0].get_label() == "cut: p = 0.9: 7 kept, 2 removed"
    assert torch.cumsum(sorted_probs, 0)[5] < 0.9 <= torch.cumsum(sorted_probs, 0)[6]  # the picture's claim


def test_sorted_probabilities_of_a_large_vocabulary_shows_the_top_tokens_and_writes_a_far_cut():
    logits = torch.linspace(3, -3, 1000)
    probs = torch.softmax(logits, dim=0)
    kept = torch.zeros(1000, dtype=torch.bool)
    kept[:150] = True

    class Tokenizer:
        def decode(self, ids):
            return f"t{ids[0]}"

    ax = plots.plot_sorted_probabilities(probs, tokenizer=Tokenizer(), kept=kept, p=0.95, max_tokens=12)

    assert len(bars(ax)) == 12
    assert [t.get_text() for t in ax.get_xticklabels()][:2] == ["'t0'", "'t1'"]
    assert not [line for line in ax.get_lines() if line.get_label().startswith("cut")]
    assert any("cut after rank 150 (p = 0.95)" in t.get_text() for t in ax.texts)
    assert "top 12 of 1,000" in ax.get_xlabel()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"probs": torch.tensor([0.5, 0.6])}, "summing to 1"),
        ({"max_tokens": 31}, "at most 30"),
        ({"max_tokens": 0}, "max_tokens must be at least 1"),
        ({"labels": ["a"]}, "1 labels for 9"),
        ({"p": 1.5}, r"p must be in \(0, 1\]"),
        ({"k": 0}, "k must be at least 1"),
        ({"kept": torch.ones(3, dtype=torch.bool)}, "mask of shape"),
        ({"kept": torch.zeros(9, dtype=torch.bool)}, "at least one"),
    ],
)
def test_sorted_probabilities_rejects_bad_arguments(kwargs, message):
    arguments = {"probs": torch.softmax(LOGITS, dim=0), **kwargs}
    with pytest.raises(ValueError, match=message):
        plots.plot_sorted_probabilities(**arguments)


# --- plot_kv_cache_mask and plot_kv_cache_masks ---------------------------------------------


def test_kv_cache_mask_colours_the_rows_of_the_chunk_and_the_columns_so_far():
    ax = plots.plot_kv_cache_mask(4, 3, context_length=9)

    codes = np.asarray(ax.images[0].get_array())
    assert codes.shape == (9, 9)
    # rows 4..6 (the chunk's queries), columns 0..6 (every key so far): the part in use
    np.testing.assert_array_equal(codes[4:7, :4], 2)  # keys from the cache
    np.testing.assert_array_equal(codes[4:7, 4:7], [[3, 4, 4], [3, 3, 4], [3, 3, 3]])  # the chunk: causal
    assert set(np.unique(codes[:4])) == {0, 1} and set(np.unique(codes[7:])) == {0, 1}  # not in use
    assert set(np.unique(codes[4:7, 7:])) == {1}  # columns after the chunk: hidden, not in use
    frame = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(frame) == 1
    assert (frame[0].get_x(), frame[0].get_y(), frame[0].get_width(), frame[0].get_height()) == (-0.5, 3.5, 7, 3)
    assert ax.get_title().endswith("mask[4:7, :7]")
    assert ax.get_xlabel() == "key position" and ax.get_ylabel() == "query position"
    assert legend_texts(ax.get_legend())[:3] == ["key from the cache", "key of this chunk", "later key: masked (−inf)"]


def test_kv_cache_mask_without_a_cache_is_the_plain_causal_mask():
    ax = plots.plot_kv_cache_mask(0, 5, legend=False)
    codes = np.asarray(ax.images[0].get_array())
    np.testing.assert_array_equal(codes, np.where(np.triu(np.ones((5, 5)), k=1) == 1, 4, 3))
    assert ax.get_legend() is None


def test_kv_cache_masks_side_by_side_with_one_legend():
    fig = plots.plot_kv_cache_masks([(0, 4), (4, 3), (7, 1)], context_length=10)

    assert len(fig.axes) == 3
    assert [ax.get_title() for ax in fig.axes] == ["4 new after 0 cached: mask[0:4, :4]",
                                                   "3 new after 4 cached: mask[4:7, :7]",
                                                   "1 new after 7 cached: mask[7:8, :8]"]
    assert all(np.asarray(ax.images[0].get_array()).shape == (10, 10) for ax in fig.axes)
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    last = np.asarray(fig.axes[2].images[0].get_array())
    np.testing.assert_array_equal(last[7, :8], [2] * 7 + [3])  # one query, seven cached keys and itself


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: plots.plot_kv_cache_mask(4, 0), "new must be at least 1"),
        (lambda: plots.plot_kv_cache_mask(-1, 2), "cached must be at least 0"),
        (lambda: plots.plot_kv_cache_mask(6, 3, context_length=8), "do not fit a context_length of 8"),
        (lambda: plots.plot_kv_cache_mask(20, 5), "at most 24 positions"),
        (lambda: plots.plot_kv_cache_masks([]), "empty"),
        (lambda: plots.plot_kv_cache_masks([(0, 1)] * 4), "at most 3"),
        (lambda: plots.plot_kv_cache_masks([(0, 1, 2)]), r"\(cached, new\)"),
    ],
)
def test_kv_cache_mask_rejects_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- plot_time_per_token --------------------------------------------------------------------


def test_time_per_token_a_few_positions_as_a_line_and_every_position_smoothed():
    few = (np.arange(16, 500, 32), 0.0005 * np.arange(16, 500, 32))
    positions = np.arange(10, 500)
    times = np.full(len(positions), 0.012)
    times[::50] = 0.2  # a busy machine's slow steps

    ax = plots.plot_time_per_token({"without the cache": few, "with the cache": (torch.tensor(positions), times)})

    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert list(lines) == ["without the cache", "with the cache"]
    np.testing.assert_allclose(lines["without the cache"].get_ydata(), 1e3 * few[1])  # milliseconds
    np.testing.assert_array_equal(lines["without the cache"].get_xdata(), few[0])
    np.testing.assert_allclose(lines["with the cache"].get_ydata(), 12.0)  # the running median ignores them
    dots = [line for line in ax.get_lines() if line.get_label().startswith("_")]
    assert len(dots) == 1 and len(dots[0].get_xdata()) == len(positions)  # every measured time is shown
    assert lines["without the cache"].get_color() != lines["with the cache"].get_color()
    assert "position" in ax.get_xlabel() and "ms" in ax.get_ylabel()


def test_time_per_token_scale_follows_the_median_not_a_few_slow_steps():
    positions = np.arange(200)
    times = np.full(len(positions), 0.010)
    times[[40, 45, 50, 51]] = 0.7  # a busy machine: four steps of 700 ms among steps of 10 ms

    ax = plots.plot_time_per_token({"with the cache": (positions, times)})

    bottom, top = ax.get_ylim()
    assert bottom == 0 and 10 < top < 50  # the 10 ms line fills the plot instead of hugging the axis


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ({}, "empty"),
        ({"a": ([1, 2],)}, r"give \(positions, seconds\)"),
        ({"a": ([1, 2], [0.1])}, "one time per position"),
        ({"a": ([1], [-0.1])}, "negative"),
        ({f"run {i}": ([1], [0.1]) for i in range(5)}, "at most 4 runs"),
    ],
)
def test_time_per_token_rejects_bad_arguments(runs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_time_per_token(runs)
