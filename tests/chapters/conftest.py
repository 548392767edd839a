"""Fixtures that more than one chapter's tests use."""
import pytest

from gptcourse.data import read_text


@pytest.fixture(scope="module")
def verdict_text():
    """'The Verdict', the short story chapters 01 and 05 tokenize and train on."""
    return read_text("the-verdict")
