"""Tests of the chapter-05 pictures in gptcourse.plots: target-token probabilities, loss curves
with the tokens seen, the learning-rate schedule, gradient norms before and after clipping,
and training runs compared."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")  # draw into memory: no window, works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from gptcourse import plots  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def drawn_lines(ax):
    """The lines a legend names (not helper lines such as axvline without a label)."""
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


# --- plot_target_probabilities --------------------------------------------------------------


def test_target_probabilities_one_bar_per_target_with_its_loss_term():
    probs = torch.tensor([7.4541e-05, 3.1061e-05, 1.1563e-05], requires_grad=True)  # must detach

    ax = plots.plot_target_probabilities(probs, [" effort", " moves", " you"], vocab_size=50257)

    assert isinstance(ax, Axes)
    assert [bar.get_height() for bar in ax.patches] == pytest.approx(probs.tolist())
    assert [t.get_text() for t in ax.get_xticklabels()] == [" effort", " moves", " you"]
    assert ax.get_yscale() == "log"
    uniform = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert uniform and uniform[0].get_ydata()[0] == pytest.approx(1 / 50257)
    terms = [t.get_text() for t in ax.texts]
    assert terms[0].endswith(f"{-math.log(7.4541e-05):.2f}") and terms[2].endswith("11.37")
    mean = -np.log(probs.detach().numpy()).mean()
    assert f"{mean:.4f}" in ax.get_title()
    assert ax.get_xlabel() and ax.get_ylabel()
    low, high = ax.get_ylim()
    assert low < 1 / 50257 and high > probs.max().item()  # the line and the bars are in view


@pytest.mark.parametrize(
    ("probs", "labels", "vocab_size", "message"),
    [
        (torch.tensor([0.5, 0.0]), ["a", "b"], 10, "log scale"),
        (torch.tensor([0.5, 1.5]), ["a", "b"], 10, r"\(0, 1\]"),
        (torch.full((2, 2), 0.1), ["a", "b"], 10, "1-d"),
        (torch.tensor([0.5, 0.2]), ["a"], 10, "1 labels for 2"),
        (torch.tensor([0.5, 0.2]), ["a", "b"], 1, "vocab_size must be at least 2"),
    ],
)
def test_target_probabilities_rejects_bad_arguments(probs, labels, vocab_size, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_target_probabilities(probs, labels, vocab_size=vocab_size)


# --- plot_losses --------------------------------------------------------------------------


def test_losses_drawn_against_steps_with_tokens_seen_on_top():
    train = [9.8, 7.1, 5.0, 3.2, 1.9, 0.8]
    val = [9.9, 7.4, 6.3, 6.1, 6.4, 6.9]
    tokens = [512, 3072, 5632, 8192, 10752, 13312]  # 512 tokens per step, evaluated every 5 steps

    ax = plots.plot_losses(train, val, tokens, eval_freq=5, steps_per_epoch=9)

    lines = drawn_lines(ax)
    np.testing.assert_allclose(lines["training loss"].get_ydata(), train)
    np.testing.assert_allclose(lines["validation loss"].get_ydata(), val)
    np.testing.assert_array_equal(lines["training loss"].get_xdata(), [0, 5, 10, 15, 20, 25])
    best = [label for label in lines if label.startswith("lowest validation loss")]
    assert best == ["lowest validation loss (6.10, step 15)"]
    assert list(lines[best[0]].get_xdata()) == [15]
    assert "step" in ax.get_xlabel() and "loss" in ax.get_ylabel()

    top = [other for other in ax.figure.axes if other is not ax]
    assert len(top) == 1
    top = top[0]
    assert top.get_xlabel() == "tokens seen"
    assert top.get_xlim() == pytest.approx(ax.get_xlim())  # the two axes line up
    ticks = list(top.get_xticks())
    labels = [t.get_text() for t in top.get_xticklabels()]
    for tick, label in zip(ticks, labels):
        evaluation = [0, 5, 10, 15, 20, 25].index(tick)
        assert label == f"{tokens[evaluation]:,}"
    assert labels[0] == "512" and labels[-1] == "13,312"
    epoch_lines = [line for line in ax.get_lines() if line.get_label().startswith("_")
                   and list(line.get_xdata()) in ([9, 9], [18, 18])]
    assert len(epoch_lines) == 2


def test_losses_with_many_evaluations_label_at_most_six_tokens_ticks():
    n = 40
    ax = plots.plot_losses(np.linspace(10, 1, n), np.linspace(10, 5, n), np.arange(1, n + 1) * 256, eval_freq=3)
    top = ax.figure.axes[1]
    ticks = top.get_xticks()
    assert 2 <= len(ticks) <= 6
    for tick, label in zip(ticks, top.get_xticklabels()):
        assert tick % 3 == 0  # every tick is at an evaluation step
        assert label.get_text() == f"{int((tick // 3 + 1) * 256):,}"


@pytest.mark.parametrize(
    ("train", "val", "tokens", "kwargs", "message"),
    [
        ([], [], [], {}, "empty"),
        ([1.0, 2.0], [1.0], [1, 2], {}, "one entry per evaluation"),
        ([1.0, 2.0], [1.0, 2.0], [5, 3], {}, "must not decrease"),
        ([1.0], [1.0], [1], {"eval_freq": 0}, "eval_freq must be at least 1"),
    ],
)
def test_losses_rejects_bad_arguments(train, val, tokens, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_losses(train, val, tokens, **kwargs)


# --- plot_learning_rate -------------------------------------------------------------------


def warmup_cosine(total, warmup, peak, initial, minimum):
    rates = []
    for step in range(total):
        if step < warmup:
            rates.append(initial + step * (peak - initial) / warmup)
        else:
            progress = (step - warmup) / (total - warmup)
            rates.append(minimum + (peak - minimum) * 0.5 * (1 + math.cos(math.pi * progress)))
    return rates


def test_learning_rate_draws_every_step_and_shades_the_warmup():
    rates = warmup_cosine(100, 10, 4e-3, 4e-5, 4e-5)

    ax = plots.plot_learning_rate(rates, warmup_steps=10)

    line = drawn_lines(ax)["learning rate"]
    np.testing.assert_allclose(line.get_ydata(), rates)
    np.testing.assert_array_equal(line.get_xdata(), np.arange(100))
    shaded = [p for p in ax.patches if p.get_label().startswith("warmup")]
    assert len(shaded) == 1 and shaded[0].get_label() == "warmup: steps 0 to 9"
    x0, x1 = shaded[0].get_x(), shaded[0].get_x() + shaded[0].get_width()
    assert (x0, x1) == pytest.approx((-0.5, 9.5))
    assert any("peak 0.004 at step 10" in t.get_text() for t in ax.texts)
    assert ax.get_xlabel() == "training step" and ax.get_ylabel() == "learning rate"


def test_learning_rate_without_warmup_and_bad_arguments():
    ax = plots.plot_learning_rate(torch.tensor([1e-3, 1e-3, 1e-3]))
    assert not ax.patches and not ax.texts
    with pytest.raises(ValueError, match="2 or more"):
        plots.plot_learning_rate([1e-3])
    with pytest.raises(ValueError, match="negative"):
        plots.plot_learning_rate([1e-3, -1e-3])
    with pytest.raises(ValueError, match="smaller than the number of steps"):
        plots.plot_learning_rate([1e-3, 2e-3], warmup_steps=2)


# --- plot_gradient_norms_per_step and plot_gradient_norms_per_tensor ----------------------


def test_gradient_norms_per_step_before_and_after_with_the_cap():
    before = [3.5, 0.7, 1.8, 2.2]
    after = [1.0, 0.7, 1.0, 1.0]

    ax = plots.plot_gradient_norms_per_step(torch.tensor(before), after, max_norm=1.0)

    heights = [bar.get_height() for bar in ax.patches]
    assert heights == pytest.approx(before + after)  # the "before" bars first, then the "after" bars
    cap = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert cap and cap[0].get_ydata()[0] == 1.0 and "max_norm = 1" in cap[0].get_label()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"before clipping", "after clipping", "max_norm = 1"} == set(legend)
    assert ax.get_xlabel() == "training step" and "norm" in ax.get_ylabel()


def test_gradient_norms_per_step_rejects_bad_arguments():
    with pytest.raises(ValueError, match="one norm per step"):
        plots.plot_gradient_norms_per_step([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="negative"):
        plots.plot_gradient_norms_per_step([-1.0], [1.0])
    with pytest.raises(ValueError, match="max_norm must be positive"):
        plots.plot_gradient_norms_per_step([1.0], [1.0], max_norm=0)


def test_gradient_norms_per_tensor_pairs_of_bars_on_a_log_scale():
    before = {"tok_emb.weight": 2.0, "trf_blocks.0.att.W_query.weight": torch.tensor(0.02), "out_head.weight": 3.0}
    after = {name: float(value) / 4.0 for name, value in before.items()}

    ax = plots.plot_gradient_norms_per_tensor(before, after)

    assert ax.get_xscale() == "log"
    widths = [bar.get_width() for bar in ax.patches]
    assert widths == pytest.approx([2.0, 0.02, 3.0, 0.5, 0.005, 0.75])
    assert [t.get_text() for t in ax.get_yticklabels()] == list(before)
    assert ax.yaxis_inverted()  # the first parameter at the top
    assert "norm" in ax.get_xlabel()


def test_gradient_norms_per_tensor_rejects_bad_arguments():
    with pytest.raises(ValueError, match="empty"):
        plots.plot_gradient_norms_per_tensor({}, {})
    with pytest.raises(ValueError, match="same parameters"):
        plots.plot_gradient_norms_per_tensor({"a": 1.0, "b": 1.0}, {"b": 1.0, "a": 1.0})
    with pytest.raises(ValueError, match="positive"):
        plots.plot_gradient_norms_per_tensor({"a": 0.0}, {"a": 0.0})


# --- plot_runs_compared -------------------------------------------------------------------


def test_runs_compared_one_colour_per_run_solid_and_dashed():
    runs = {
        "constant rate": ([0, 18, 36], [10.9, 6.5, 5.8], [10.9, 6.9, 6.7]),
        "warmup + cosine": (torch.tensor([0, 18, 36, 54]), [10.9, 6.0, 3.1, 0.9], [10.9, 6.6, 6.2, 6.5]),
    }

    ax = plots.plot_runs_compared(runs)

    lines = drawn_lines(ax)
    assert list(lines) == ["constant rate: training", "constant rate: validation",
                           "warmup + cosine: training", "warmup + cosine: validation"]
    np.testing.assert_allclose(lines["warmup + cosine: training"].get_ydata(), [10.9, 6.0, 3.1, 0.9])
    np.testing.assert_array_equal(lines["warmup + cosine: validation"].get_xdata(), [0, 18, 36, 54])
    assert lines["constant rate: training"].get_linestyle() == "-"
    assert lines["constant rate: validation"].get_linestyle() == "--"
    assert lines["constant rate: training"].get_color() == lines["constant rate: validation"].get_color()
    assert lines["constant rate: training"].get_color() != lines["warmup + cosine: training"].get_color()
    assert ax.get_xlabel() == "training step" and "loss" in ax.get_ylabel()


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ({}, "empty"),
        ({"a": ([0, 1], [1.0, 2.0])}, "give \\(steps"),
        ({"a": ([0, 1], [1.0, 2.0], [1.0])}, "one of each per evaluation"),
        ({f"run {i}": ([0], [1.0], [1.0]) for i in range(6)}, "at most 5 runs"),
    ],
)
def test_runs_compared_rejects_bad_arguments(runs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_runs_compared(runs)


# --- plot_speed_steps -------------------------------------------------------------------------


def test_speed_steps_one_bar_per_measured_step_labelled_with_its_speed_up():
    ax = plots.plot_speed_steps({"plain": 1000.0, "+ bf16 autocast": 2500.0, "+ torch.compile": None})
    assert isinstance(ax, Axes)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["plain", "+ bf16 autocast", "+ torch.compile"]
    widths = [patch.get_width() for patch in ax.patches]
    assert widths == [1000.0, 2500.0]  # no bar for the step not measured
    labels = [text.get_text() for text in ax.texts]
    assert any("(2.50x)" in label for label in labels) and any("not measured" in label for label in labels)
    assert ax.get_xlabel() == "tokens per second"


@pytest.mark.parametrize("speeds", [{}, {"plain": None}, {"plain": 10.0, "+ TF32": -1.0}])
def test_speed_steps_refuse_what_they_cannot_draw(speeds):
    with pytest.raises(ValueError):
        plots.plot_speed_steps(speeds)
