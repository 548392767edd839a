"""Tests of the chapter-09 pictures in gptcourse.plots: what a collate function made of a
batch of instruction examples, and the histogram of the scores of a model's responses."""

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

PAD = 50256


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def width_fits(fig):
    return fig.get_size_inches()[0] <= plots.MAX_FIGURE_WIDTH


def collate(batch, pad=PAD, ignore_index=-100):
    """The book's collate function: pad with end-of-text tokens, shift the targets by one and
    ignore every padding target but the first."""
    length = max(len(entry) for entry in batch) + 1
    inputs, targets = [], []
    for entry in batch:
        padded = entry + [pad] * (length + 1 - len(entry))
        target = padded[1:]
        target = [t if t != pad or i == len(entry) - 1 else ignore_index for i, t in enumerate(target)]
        inputs.append(padded[:-1])
        targets.append(target)
    return torch.tensor(inputs), torch.tensor(targets)


def cell_colours(ax, shape):
    """The face colour of every cell of a heatmap, as hex strings in a (batch, length) array."""
    colours = ax.collections[0].get_facecolors()
    return np.array([to_hex(c) for c in colours]).reshape(shape)


# --- plot_collated_batch ------------------------------------------------------------------------


def test_collated_batch_colours_each_cell_by_its_kind():
    inputs, targets = collate([[0, 1, 2, 3, 4], [5, 6], [7, 8, 9]])

    fig = plots.plot_collated_batch(inputs, targets)

    assert isinstance(fig, Figure) and width_fits(fig)
    input_ax, target_ax = fig.axes[:2]
    assert input_ax.get_title() == "inputs" and target_ax.get_title().startswith("targets")
    token, padding = to_hex(plots.BATCH_TOKEN_COLOUR), to_hex(plots.BATCH_PADDING_COLOUR)
    end, ignored = to_hex(plots.BATCH_END_COLOUR), to_hex(plots.BATCH_IGNORED_COLOUR)
    assert len({token, padding, end, ignored}) == 4
    assert input_ax.collections[0].get_array().size == 3 * 6  # one cell per position of every entry
    inputs_seen = cell_colours(input_ax, (3, 6))
    assert list(inputs_seen[1]) == [token, token, padding, padding, padding, padding]
    assert list(inputs_seen[0]) == [token] * 5 + [padding]
    targets_seen = cell_colours(target_ax, (3, 6))
    assert list(targets_seen[1]) == [token, end, ignored, ignored, ignored, ignored]
    assert list(targets_seen[0]) == [token] * 4 + [end, ignored]
    assert list(targets_seen[2]) == [token, token, end, ignored, ignored, ignored]
    assert "10 of 18 targets count in the loss" in fig._suptitle.get_text()


def test_collated_batch_legend_names_the_colours_and_the_ids():
    inputs, targets = collate([[1, 2, 3], [4]], pad=7, ignore_index=-1)

    fig = plots.plot_collated_batch(inputs, targets, pad_token_id=7, ignore_index=-1, title="My batch")

    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["token", "padding (7)", "end of text (first padding: learned)", "ignored (-1)"]
    patches = [to_hex(p.get_facecolor()) for p in legend.get_patches()]
    assert patches == [to_hex(c) for c in (plots.BATCH_TOKEN_COLOUR, plots.BATCH_PADDING_COLOUR,
                                           plots.BATCH_END_COLOUR, plots.BATCH_IGNORED_COLOUR)]
    assert fig._suptitle.get_text().startswith("My batch\n")
    # The other pad id and ignore index: the cells follow them, not the defaults.
    target_ax = fig.axes[1]
    assert list(cell_colours(target_ax, (2, 4))[1]) == [to_hex(plots.BATCH_END_COLOUR)] + [
        to_hex(plots.BATCH_IGNORED_COLOUR)] * 3


def test_collated_batch_writes_the_ids_of_a_small_batch_and_labels_the_rows():
    inputs, targets = collate([[10, 11, 12], [13]])

    fig = plots.plot_collated_batch(inputs.numpy(), targets.numpy())

    input_ax, target_ax = fig.axes[:2]
    written = np.array([t.get_text() for t in input_ax.texts]).reshape(2, 4)
    np.testing.assert_array_equal(written, inputs.numpy().astype(str))
    written = np.array([t.get_text() for t in target_ax.texts]).reshape(2, 4)
    np.testing.assert_array_equal(written, targets.numpy().astype(str))
    assert [t.get_text() for t in input_ax.get_yticklabels()] == ["entry 0", "entry 1"]
    assert [t.get_text() for t in input_ax.get_xticklabels()] == ["0", "1", "2", "3"]
    assert input_ax.get_xlabel() == "position in the sequence"
    assert input_ax.get_position().x1 < target_ax.get_position().x0  # side by side


def test_collated_batch_of_a_large_batch_writes_no_ids_and_stacks_the_panels():
    rng = np.random.default_rng(0)
    inputs, targets = collate([list(rng.integers(0, 50000, n)) for n in rng.integers(20, 90, 12)])

    fig = plots.plot_collated_batch(inputs, targets)

    input_ax, target_ax = fig.axes[:2]
    assert not input_ax.texts and not target_ax.texts
    assert input_ax.collections[0].get_array().size == inputs.numel()
    assert input_ax.get_position().y0 > target_ax.get_position().y1  # inputs above the targets
    assert width_fits(fig)
    assert len(input_ax.get_xticklabels()) <= 30 and len(input_ax.get_yticklabels()) == 12


def test_collated_batch_writes_ids_only_when_the_batch_is_short_and_has_few_entries():
    long_inputs, long_targets = collate([[1] * 30, [2] * 5])  # 31 positions
    assert not plots.plot_collated_batch(long_inputs, long_targets).axes[0].texts
    many_inputs, many_targets = collate([[i, i] for i in range(9)])  # 9 entries
    assert not plots.plot_collated_batch(many_inputs, many_targets).axes[0].texts
    edge_inputs, edge_targets = collate([[1] * 23] * 8)  # 24 positions, 8 entries: still written
    assert len(plots.plot_collated_batch(edge_inputs, edge_targets).axes[0].texts) == 8 * 24


def test_collated_batch_annotate_overrides_the_default():
    inputs, targets = collate([[1, 2], [3]])
    fig = plots.plot_collated_batch(inputs, targets, annotate=False)
    assert not fig.axes[0].texts

    inputs, targets = collate([[1] * 30, [2] * 5])
    fig = plots.plot_collated_batch(inputs, targets, annotate=True)
    assert len(fig.axes[0].texts) == inputs.numel()


def test_collated_batch_draws_on_the_axes_it_is_given():
    fig, axes = plt.subplots(2, 1)
    inputs, targets = collate([[1, 2], [3]])

    returned = plots.plot_collated_batch(inputs, targets, ax=axes)

    assert returned is fig
    assert axes[0].get_title() == "inputs" and axes[0].collections and axes[1].collections
    with pytest.raises(ValueError, match="ax must be two Axes, one for the inputs and one for the targets, got 1"):
        plots.plot_collated_batch(inputs, targets, ax=axes[0])


@pytest.mark.parametrize(
    ("inputs", "targets", "kwargs", "message"),
    [
        (np.zeros((2, 5)), np.zeros((2, 4)), {}, r"same shape, got \(2, 5\) and \(2, 4\)"),
        (np.zeros(5), np.zeros(5), {}, r"inputs must be 2-d, \(batch, length\), got shape \(5,\)"),
        (np.zeros((2, 5)), np.zeros((1, 2, 5)), {}, r"targets must be 2-d"),
        (np.zeros((0, 5)), np.zeros((0, 5)), {}, "inputs is empty"),
        (np.full((2, 3), 0.5), np.zeros((2, 3)), {}, "whole numbers"),
    ],
)
def test_collated_batch_rejects_bad_arguments(inputs, targets, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_collated_batch(inputs, targets, **kwargs)


# --- plot_response_scores -----------------------------------------------------------------------


def bars(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_response_scores_histogram_counts_every_scored_response_with_the_mean():
    rng = np.random.default_rng(1)
    scores = list(rng.uniform(0, 100, 37)) + [None, None, 100.0, 0.0]

    ax = plots.plot_response_scores(scores, bins=10)

    assert isinstance(ax, Axes) and width_fits(ax.figure)
    found = bars(ax)
    assert len(found) == 10
    assert sum(b.get_height() for b in found) == 39  # the Nones are left out, 0 and 100 counted
    assert found[0].get_x() == pytest.approx(0) and found[-1].get_x() + found[-1].get_width() == pytest.approx(100)
    known = [s for s in scores if s is not None]
    (mean_line,) = ax.get_lines()
    assert mean_line.get_xdata()[0] == pytest.approx(np.mean(known)) and mean_line.get_linestyle() == "--"
    (note,) = ax.texts
    assert note.get_text() == f"mean {np.mean(known):.1f} over 39 responses\n2 without a score (left out)"
    assert ax.get_xlim() == (0, 100)
    assert ax.get_xlabel() == "chrF score (0 to 100)" and ax.get_ylabel() == "responses"
    assert ax.get_title() == "chrF scores of the responses"


def test_response_scores_bar_heights_of_a_hand_example():
    ax = plots.plot_response_scores(torch.tensor([5.0, 15.0, 12.0, 95.0]), bins=10, label="judge", title="Judged")

    assert [b.get_height() for b in bars(ax)] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 1]
    assert ax.get_lines()[0].get_xdata()[0] == pytest.approx(31.75)
    assert ax.texts[0].get_text() == "mean 31.8 over 4 responses"
    assert ax.get_xlabel() == "judge score (0 to 100)" and ax.get_title() == "Judged"
    assert ax.get_ylim()[1] > 2  # room above the tallest bar for the note


@pytest.mark.parametrize(
    ("scores", "kwargs", "message"),
    [
        ([], {}, "no scores"),
        ([None, None], {}, "no scores"),
        ([50, 120], {}, "from 0 to 100, got 120"),
        ([-1], {}, "got -1"),
        ([50], {"bins": 0}, "bins must be at least 1"),
    ],
)
def test_response_scores_rejects_bad_arguments(scores, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_response_scores(scores, **kwargs)
