"""Shared fixtures of the project's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    """Under pytest-xdist (make test, make test-fast: two processes on two cores), every test
    process and what it starts (kernels, the grader, torchrun) uses one torch thread. Two processes
    each with torch's default of one thread per core oversubscribe the cores, and torch's threads
    then wait on each other: a master notebook took over 11 minutes instead of under 4. A value
    set by the user is kept."""
    if os.environ.get("PYTEST_XDIST_WORKER") and int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        os.environ.setdefault("MKL_NUM_THREADS", "1")


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
