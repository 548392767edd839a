"""Tests of the chapter-01 pictures in gptcourse.plots: token boundaries, sliding windows and
position encodings."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")  # draw into memory: no window, works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiktoken.registry  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from gptcourse import plots, tokenizer  # noqa: E402

HELLO = "Hello, do you like tea? <|endoftext|> In the sunlit terraces"
HELLO_IDS = [15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


class WordTokenizer:
    """A toy tokenizer like the course's SimpleTokenizerV2: encode(text) takes no options."""

    def __init__(self, words):
        self.str_to_int = {word: index for index, word in enumerate(words)}
        self.int_to_str = dict(enumerate(words))

    def encode(self, text):
        return [self.str_to_int[word] for word in text.split()]

    def decode(self, ids):
        return " ".join(self.int_to_str[i] for i in ids)


class PieceTokenizer:
    """A toy tokenizer like tiktoken's: pieces keep their leading space, and encode accepts
    allowed_special (the plot passes "all" so that <|endoftext|> stays one token)."""

    PIECES = ["the", " cat", " sat", "\n", "<|endoftext|>", " on", "\t", "mat"]

    def __init__(self):
        self.seen_allowed_special = None

    def encode(self, text, allowed_special=frozenset()):
        self.seen_allowed_special = allowed_special
        pattern = "|".join(re.escape(p) for p in sorted(self.PIECES, key=len, reverse=True))
        return [self.PIECES.index(piece) + 100 for piece in re.findall(pattern, text)]

    def decode(self, ids):
        return "".join(self.PIECES[i - 100] for i in ids)


def token_boxes(ax: Axes):
    return [patch for patch in ax.patches if patch.get_gid() == "token"]


def texts(ax: Axes) -> list[str]:
    return [text.get_text() for text in ax.texts]


def windows(ax: Axes, kind: str) -> dict[int, list]:
    """{stride: [the bars of that kind, in window order]} from the gids the plot gives its bars."""
    found: dict[int, list] = {}
    for patch in ax.patches:
        match = re.fullmatch(rf"{kind}:stride=(\d+):window=(\d+)", patch.get_gid() or "")
        if match:
            found.setdefault(int(match.group(1)), []).append((int(match.group(2)), patch))
    return {stride: [p for _, p in sorted(bars, key=lambda bar: bar[0])] for stride, bars in found.items()}


def sinusoidal(num_positions=20, dim=8):
    position = torch.arange(num_positions, dtype=torch.float32).unsqueeze(1)
    angle = position / 10000 ** (torch.arange(0, dim, 2) / dim)
    encodings = torch.zeros(num_positions, dim)
    encodings[:, 0::2], encodings[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return encodings


# --- plot_token_boundaries ---------------------------------------------------------------


def test_token_boundaries_one_box_per_token_with_its_id():
    words = ["a", "cat", "sat", "on", "the", "mat", "."]
    toy = WordTokenizer(words)
    text = "the cat sat on the mat ."

    ax = plots.plot_token_boundaries(text, toy)

    assert isinstance(ax, Axes)
    ids = toy.encode(text)
    boxes = token_boxes(ax)
    assert len(boxes) == len(ids) == 7
    shown = texts(ax)
    for token_id, word in zip(ids, text.split()):
        assert str(token_id) in shown and word in shown
    # Left to right on one line, and neighbouring boxes never share a colour.
    xs = [box.get_x() for box in boxes]
    assert xs == sorted(xs)
    colours = [box.get_facecolor() for box in boxes]
    assert all(a != b for a, b in zip(colours, colours[1:]))


def test_token_boundaries_makes_whitespace_visible_and_keeps_special_tokens():
    toy = PieceTokenizer()

    ax = plots.plot_token_boundaries("the cat\n<|endoftext|>\tmat", toy)

    assert toy.seen_allowed_special == "all"
    shown = texts(ax)
    assert ["the", "␣cat", "↵", "<|endoftext|>", "→", "mat"] == shown[0::2]  # label, id, label, id ...
    assert ["100", "101", "103", "104", "106", "107"] == shown[1::2]
    assert len(token_boxes(ax)) == 6


def test_token_boundaries_wraps_long_text_onto_more_lines():
    toy = WordTokenizer(["word"])
    ax = plots.plot_token_boundaries(" ".join(["word"] * 40), toy, line_width=30)

    rows = {round(box.get_y(), 6) for box in token_boxes(ax)}
    assert len(token_boxes(ax)) == 40
    assert len(rows) > 1
    assert max(box.get_x() + box.get_width() for box in token_boxes(ax)) <= 30


def test_token_boundaries_on_a_given_axes():
    fig, ax = plt.subplots()
    assert plots.plot_token_boundaries("the cat", PieceTokenizer(), ax=ax) is ax
    assert len(fig.axes) == 1


def test_token_boundaries_of_gpt2(monkeypatch, tmp_path, mirror_dir):
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    monkeypatch.setenv("GPTCOURSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    tokenizer.get_encoding.cache_clear()
    tiktoken.registry.ENCODINGS.pop("gpt2", None)
    try:
        ax = plots.plot_token_boundaries(HELLO, tokenizer.get_encoding())
    finally:
        tokenizer.get_encoding.cache_clear()
        tiktoken.registry.ENCODINGS.pop("gpt2", None)

    assert len(token_boxes(ax)) == len(HELLO_IDS)
    shown = texts(ax)
    assert shown[1::2] == [str(i) for i in HELLO_IDS]
    assert shown[0::2][:3] == ["Hello", ",", "␣do"]
    assert "<|endoftext|>" in shown


@pytest.mark.parametrize(
    ("text", "kwargs", "error", "message"),
    [
        ("", {}, ValueError, "empty"),
        ("word " * (plots.MAX_TOKENS_SHOWN + 1), {}, ValueError, "shorter"),
        ("the cat", {"line_width": 3}, ValueError, "line_width"),
        (["the", "cat"], {}, TypeError, "string"),
    ],
)
def test_token_boundaries_rejects_bad_arguments(text, kwargs, error, message):
    with pytest.raises(error, match=message):
        plots.plot_token_boundaries(text, WordTokenizer(["word", "the", "cat"]), **kwargs)


def test_token_boundaries_needs_a_tokenizer():
    with pytest.raises(TypeError, match="encode"):
        plots.plot_token_boundaries("the cat", {"the": 0, "cat": 1})


# --- plot_sliding_windows ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("num_tokens", "max_length", "strides", "expected"),
    [
        (12, 4, [1, 4], {1: 8, 4: 2}),  # the book's windows of the-verdict, on a short strip
        (12, 4, [3], {3: 3}),
        (9, 4, 2, {2: 3}),  # a single stride may be given without a list
        (5, 4, [1, 4], {1: 1, 4: 1}),  # just enough tokens for one window
        (10, 2, [5], {5: 2}),  # stride > max_length: tokens skipped between windows
    ],
)
def test_sliding_windows_count_per_stride(num_tokens, max_length, strides, expected):
    ax = plots.plot_sliding_windows(num_tokens, max_length, strides)

    inputs, targets = windows(ax, "input"), windows(ax, "target")
    assert {s: len(bars) for s, bars in inputs.items()} == expected
    assert {s: len(bars) for s, bars in targets.items()} == expected
    # The same count as GPTDatasetV1's loop, and stated in the group's heading.
    for stride, count in expected.items():
        assert count == len(range(0, num_tokens - max_length, stride))
        assert any(t.startswith(f"stride {stride}: {count} windows") for t in texts(ax))


def test_sliding_windows_inputs_start_every_stride_and_targets_are_shifted_by_one():
    ax = plots.plot_sliding_windows(12, 4, [1, 4])

    inputs, targets = windows(ax, "input"), windows(ax, "target")
    for stride in (1, 4):
        assert [bar.get_x() for bar in inputs[stride]] == list(range(0, 8, stride))
        for x, y in zip(inputs[stride], targets[stride]):
            assert x.get_width() == y.get_width() == 4
            assert y.get_x() == x.get_x() + 1
            assert y.get_y() > x.get_y()  # the target row lies under its input (y axis points down)
        assert all(to_rgb(b.get_facecolor()) == to_rgb(plots.INPUT_COLOUR) for b in inputs[stride])
        assert all(to_rgb(b.get_facecolor()) == to_rgb(plots.TARGET_COLOUR) for b in targets[stride])
    # No target runs past the strip: the last target ends at the last token at most.
    assert max(b.get_x() + b.get_width() for bars in targets.values() for b in bars) <= 12
    assert ax.get_xlabel() == "token position"


def test_sliding_windows_strip_shows_the_labels():
    ids = [40, 367, 2885, 1464, 1807, 3619]
    ax = plots.plot_sliding_windows(6, 2, [2], labels=ids)
    strip = [p for p in ax.patches if p.get_gid() == "strip"]
    assert len(strip) == 6
    assert [str(i) for i in ids] == [t for t in texts(ax) if t.isdigit()]


def test_sliding_windows_on_a_given_axes():
    fig, ax = plt.subplots()
    assert plots.plot_sliding_windows(8, 4, [4], ax=ax) is ax
    assert len(fig.axes) == 1


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((4, 4, [1]), {}, "larger than max_length"),
        ((3, 5, [1]), {}, "larger than max_length"),
        ((12, 0, [1]), {}, "max_length must be at least 1"),
        ((12, 4, [0]), {}, "stride must be at least 1"),
        ((12, 4, [1, -2]), {}, "stride must be at least 1"),
        ((12, 4, []), {}, "strides is empty"),
        ((12, 4, [1.5]), {}, "whole number"),
        ((12.0, 4, [1]), {}, "whole number"),
        ((1, 4, [1]), {}, "num_tokens must be at least 2"),
        ((plots.MAX_WINDOW_TOKENS + 1, 4, [1]), {}, "too long"),
        ((6, 2, [1]), {"labels": [1, 2, 3]}, "3 labels for 6 tokens"),
    ],
)
def test_sliding_windows_rejects_bad_arguments(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_sliding_windows(*args, **kwargs)


# --- position encodings ------------------------------------------------------------------


def test_position_encoding_lines_one_line_per_dimension():
    encodings = sinusoidal()
    ax = plots.plot_position_encoding_lines(encodings, [0, 1, 6])

    lines = [line for line in ax.get_lines() if line.get_label().startswith("dimension")]
    assert [line.get_label() for line in lines] == ["dimension 0", "dimension 1", "dimension 6"]
    np.testing.assert_allclose(lines[2].get_ydata(), encodings[:, 6].numpy(), rtol=1e-6)
    assert ax.get_xlabel() and ax.get_ylabel()


def test_position_encoding_heatmap_uses_a_symmetric_diverging_scale():
    encodings = sinusoidal().requires_grad_()  # the helper must detach
    ax = plots.plot_position_encoding_heatmap(encodings)

    image = ax.images[0]
    low, high = image.get_clim()
    assert low == pytest.approx(-high) and high == pytest.approx(encodings.abs().max().item())
    assert image.get_cmap().name == plots.POSITION_COLOURS
    assert image.get_array().shape == (20, 8)
    assert ax.get_xlabel() == "dimension" and "position" in ax.get_ylabel()
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar


def test_position_encodings_reject_bad_arguments():
    with pytest.raises(ValueError, match="num_positions, dim"):
        plots.plot_position_encoding_heatmap(torch.zeros(3, 4, 5))
    with pytest.raises(ValueError, match="outside"):
        plots.plot_position_encoding_lines(sinusoidal(dim=8), [8])
    with pytest.raises(ValueError, match="dims is empty"):
        plots.plot_position_encoding_lines(sinusoidal(), [])
