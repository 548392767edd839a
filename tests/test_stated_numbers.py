"""A number that prose states beside the constant holding it.

Where text is made by code (a task's contract, a case's label), it is written from the constant
in an f-string and needs nothing here. Where prose keeps the number for its reader (a doc, a
docstring), this table ties the words to the constant: change one, and the test names the file
and the words to change with it.
"""
import inspect
import re

import pytest

from factory import REPO
from gptcourse.checking.contract import small_number


def sampler_default_false_failure():
    from gptcourse.checking.kinds import Sampler

    return inspect.signature(Sampler.__init__).parameters["false_failure"].default


def lora_false_failure():
    from gptcourse.checking.chapters.ch08_lora import INIT_FALSE_FAILURE

    return INIT_FALSE_FAILURE


def gpt2_weights_size():
    from gptcourse import data

    return data.DATASETS["gpt2-124m"].size


# (file, the words with {} where the number stands, the constant, how the words write its value)
STATED = [
    ("docs/authoring.md", "at most `false_failure` ({} by default)", sampler_default_false_failure, small_number),
    ("course/gptcourse/checking/kinds/sampling.py", "at most false_failure ({} by default)",
     sampler_default_false_failure, small_number),
    ("grader/chapters/ch08_lora.py", "sqrt(ln(2 / {}) / (2 n))", lora_false_failure, small_number),
    ("grader/chapters/ch08_lora.py", "a correct layer fails a case with probability at most {}", lora_false_failure,
     small_number),
    ("grader/chapters/ch08_lora.py", "the DKW distance at {}", lora_false_failure, small_number),
    ("README.md", "{} bytes, its address and sha256 in `course/gptcourse/data.py`", gpt2_weights_size, "{:,}".format),
]


def one_line(text):
    """The text with every run of whitespace (line breaks, a docstring's indent) as one space."""
    return re.sub(r"\s+", " ", text)


def states(text, words, value):
    return one_line(words.format(value)) in one_line(text)


@pytest.mark.parametrize("path, words, constant, written", STATED, ids=[f"{p}: {w}" for p, w, _, _ in STATED])
def test_the_words_state_the_constant_s_value(path, words, constant, written):
    value = written(constant())
    assert states((REPO / path).read_text(encoding="utf-8"), words, value), \
        f"{path} no longer says {words.format(value)!r}: write the constant's value there"


def test_small_numbers_are_written_as_prose_writes_them():
    assert [small_number(value) for value in (2e-3, 1e-6, 1e-7, 2.5e-4)] == ["2e-3", "1e-6", "1e-7", "2.5e-4"]


def test_a_number_that_drifted_from_its_constant_is_found():
    text = "so a correct sampler fails a case with probability at most `false_failure`\n(1e-6 by default)."
    assert states(text, "at most `false_failure` ({} by default)", "1e-6")
    assert not states(text, "at most `false_failure` ({} by default)", "1e-7")
