"""Shared fixtures of the project's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The offline data mirror: $GPTCOURSE_DATA_MIRROR, else ../shared/data next to the repo."""
    folder = Path(os.environ.get("GPTCOURSE_DATA_MIRROR") or REPO_ROOT.parent / "shared" / "data")
    if not (folder / "the-verdict.txt").is_file():
        pytest.fail(
            f"No data mirror at {folder}. Set GPTCOURSE_DATA_MIRROR to a folder holding "
            "the course's data files (see course/gptcourse/data.py)."
        )
    return folder


@pytest.fixture(scope="session")
def published(tmp_path_factory, mirror_dir):
    """docs/publishing.md run against local stand-ins (tests/published.py): a fork, the
    instructor's clone, a wheel, an nbgrader course directory with one student."""
    from factory import filled_notebook
    from published import doc_value, first_wrong_item, publish

    chapter = doc_value("CHAPTER")
    mistake = first_wrong_item(chapter)
    student = filled_notebook(chapter, {mistake.task: mistake.source})
    return publish(tmp_path_factory.mktemp("published"), mirror_dir, student)


@pytest.fixture(scope="session")
def colab(tmp_path_factory):
    """A stand-in for Colab's runtime: a fresh virtual environment with torch, no gptcourse.
    It is made in the background: ask for it before `published` to overlap the two."""
    from published import ColabRuntime

    runtime = ColabRuntime(tmp_path_factory.mktemp("colab")).start()
    yield runtime
    runtime.stop()
