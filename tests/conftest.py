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


# The longest test files, first: the two pytest processes of make test start on them, so neither is
# left running one alone at the end (xdist's own order is by the number of tests, which put the
# masters last). Each master is its own unit of work: they share no fixture, and run in the two
# processes side by side; the later chapters, which train longest, first.
LONGEST_FIRST = ["tests/notebooks/test_nbgrader_agreement.py", "tests/notebooks/test_masters_run.py"]
SPLIT_BY_TEST = {"tests/notebooks/test_masters_run.py"}


def _file_of(nodeid):
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    """The longest files first, then the other slow ones, then the rest; a file's tests stay
    together (its module fixtures are made once)."""
    position = {item.nodeid: index for index, item in enumerate(items)}

    def rank(item):
        path = _file_of(item.nodeid)
        if path in LONGEST_FIRST:
            order = LONGEST_FIRST.index(path)
            within = -position[item.nodeid] if path in SPLIT_BY_TEST else position[item.nodeid]
            return (0, order, within)
        return (1 if item.get_closest_marker("slow") else 2, 0, position[item.nodeid])

    items.sort(key=rank)


def longest_first_scheduling():
    """--dist loadfile as xdist does it (a file's tests in one process), but in the order the
    collection gives (longest first) and with each test of SPLIT_BY_TEST a unit of its own."""
    from xdist.scheduler import LoadFileScheduling

    class LongestFirst(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return nodeid if _file_of(nodeid) in SPLIT_BY_TEST else super()._split_scope(nodeid)

        def schedule(self):
            self.config.option.loadscopereorder = False  # xdist's own: the files with most tests first
            super().schedule()

    return LongestFirst


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadfile":
        return None
    return longest_first_scheduling()(config, log)


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
