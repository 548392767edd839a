"""Everything generated from the masters is fresh, and notebooks are stored clean."""
import argparse
import json
import subprocess
import sys

import pytest

from factory import REPO
from gptcourse.checking.tasks import CHAPTERS

NOTEBOOKS = sorted((REPO / "solutions").glob("*.ipynb")) + sorted((REPO / "course").glob("*.ipynb"))


@pytest.mark.slow
def test_reference_release_and_fixtures_are_fresh():
    """`make release` would change nothing: reference package, release and fixtures match the masters."""
    result = subprocess.run([sys.executable, "-m", "grader", "build", "--check"], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_is_stored_without_outputs_or_volatile_metadata(path):
    nb = json.loads(path.read_text())
    assert set(nb["metadata"]) <= {"kernelspec", "language_info", "gptcourse"}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, cell["id"]
        assert not set(cell["metadata"]) & {"execution", "ExecuteTime", "collapsed", "scrolled"}


def test_the_contract_page_is_fresh():
    """docs/contract.md is what `make release` would write: the contract entries, the course table,
    the masters and the corpus as they are now (fast: it reads the masters, runs nothing)."""
    from grader.authoring import build, contract

    page = (REPO / "docs" / "contract.md").read_text()
    assert page == contract.page_text(build.build_manifest()), "docs/contract.md is stale: run `make release`"


def test_every_chapter_has_a_master_a_release_and_fixtures():
    for chapter in CHAPTERS:
        assert (REPO / "solutions" / f"{chapter}.ipynb").is_file()
        assert (REPO / "course" / f"{chapter}.ipynb").is_file()
        assert (REPO / "course" / "gptcourse" / "checking" / "fixtures" / f"{chapter}.json").is_file()


def test_fixtures_from_another_machine_are_not_stale():
    """A fixture made on another CPU (or under another load) may differ in the last bits of its
    plain numbers (a loss, a gradient norm) as well as its arrays, and NaN stays NaN: that is
    not staleness. Plain floats used to be compared exactly, so `make test` failed whenever a
    training case's last bit moved."""
    from gptcourse.checking import records
    from grader.authoring.build import _same_numbers

    committed = {"loss": float("nan"), "norms": [0.5820484780620252, 4.4913587429807], "ids": [1, 2]}
    regenerated = {"loss": float("nan"), "norms": [0.5820484780620251, 4.491358742980698], "ids": [1, 2]}
    assert _same_numbers(records.dumps(committed), records.dumps(regenerated))
    assert not _same_numbers(records.dumps(committed), records.dumps(dict(regenerated, norms=[0.58, 4.49])))
    assert not _same_numbers(records.dumps(committed), records.dumps(dict(regenerated, ids=[1, 3])))


def test_float32_gradients_from_another_cpu_are_not_stale():
    """Chapter 04's and 06's fixtures hold float32 gradients; regenerated on an Intel machine after
    an AMD one, entries of about 10 beside entries of 100 moved by 3e-5, and a gradient that is
    0 up to rounding moved from 1.3e-6 to -1.6e-6: `make test` failed on the new machine with
    "stale generated files". A changed master still shows, and integers must still be equal."""
    import numpy as np
    from gptcourse.checking import records
    from grader.authoring.build import _same_numbers

    grad = np.array([100.34873, 12.077626, -30.664785, 0.5], dtype=np.float32)
    on_another_cpu = grad + np.array([3.0e-5, 3.05e-5, -2.1e-5, 0.0], dtype=np.float32)
    noise = np.array([1.3e-6, -2.0e-7], dtype=np.float32)
    committed = {"grad": grad, "bias": noise, "ids": np.array([50256, 3], dtype=np.int64)}
    regenerated = {"grad": on_another_cpu, "bias": -noise, "ids": np.array([50256, 3], dtype=np.int64)}
    assert _same_numbers(records.dumps(committed), records.dumps(regenerated))
    changed = dict(regenerated, grad=grad * np.float32(1.01))
    assert not _same_numbers(records.dumps(committed), records.dumps(changed))
    assert not _same_numbers(records.dumps(committed), records.dumps(dict(regenerated, ids=np.array([50255, 3]))))
    assert not _same_numbers(records.dumps(committed), records.dumps(dict(regenerated, grad=grad[:3])))


def test_a_rebuild_leaves_fixtures_with_last_bit_noise_as_committed(tmp_path, monkeypatch):
    """`python -m grader build` rewrote the chapter 04 and 05 fixtures with last-bit noise on
    every run here, so every diff carried hundreds of meaningless changed lines."""
    from gptcourse.checking import records
    from grader.authoring import build

    monkeypatch.setattr(build, "FIXTURES", str(tmp_path))
    noisy, changed = tmp_path / "noisy.json", tmp_path / "changed.json"
    noisy.write_text(records.dumps({"norms": [0.5820484780620252]}))
    changed.write_text(records.dumps({"norms": [0.5820484780620252]}))
    files = {str(noisy): records.dumps({"norms": [0.5820484780620251]}),
             str(changed): records.dumps({"norms": [0.75]})}
    monkeypatch.setattr(build, "all_files", lambda chapters: [lambda: files])
    monkeypatch.setattr(build, "_reload_reference", lambda: None)
    build.main(argparse.Namespace(check=False, chapters=None))
    assert noisy.read_text() == records.dumps({"norms": [0.5820484780620252]})  # left as committed
    assert changed.read_text() == files[str(changed)]  # a real change is written


def test_a_build_without_its_data_says_so_in_one_message(monkeypatch, capsys):
    """Offline and without GPTCOURSE_DATA_MIRROR, the build stopped with three chained
    tracebacks; now with the loader's own message, which says what to set."""
    from gptcourse.data import DownloadError
    from grader.authoring import build

    def make():
        raise DownloadError("Could not download 'the-verdict' from https://example.org: no network.\n"
                            "Without internet, copy the course's data files into a folder and set "
                            "GPTCOURSE_DATA_MIRROR to that folder")

    monkeypatch.setattr(build, "all_files", lambda chapters: [make])
    assert build.main(argparse.Namespace(check=True, chapters=None)) == 2
    said = capsys.readouterr().err
    assert said.startswith("error: Could not download 'the-verdict'") and "GPTCOURSE_DATA_MIRROR" in said
    assert "Traceback" not in said


@pytest.mark.slow
def test_a_build_of_one_chapter_makes_its_files_and_the_whole_course_s_pages():
    """`python -m grader build --chapters NN_name` (docs/authoring.md's recipe for a change to one
    chapter) makes that chapter's master, reference module, release and fixtures again, and the
    files the whole course shares (the manifest, with every other chapter's entry as committed;
    the contract page; the README's table): on this fresh checkout, exactly what is committed.
    About 20 s, most of it nbgrader making the chapter's release."""
    import os

    from grader.authoring import build
    from grader.paths import load_manifest

    chapter = "03_multihead_attention"
    files = {}
    for make in build.all_files([chapter]):
        files.update(make())
    made = sorted(os.path.relpath(path, REPO) for path in files)
    assert made == sorted([
        f"solutions/{chapter}.ipynb", "grader/reference/manifest.json", f"grader/reference/ch{chapter}.py",
        f"course/{chapter}.ipynb", f"course/gptcourse/checking/fixtures/{chapter}.json", "docs/contract.md",
        "README.md"])
    assert json.loads(files[str(REPO / "grader" / "reference" / "manifest.json")]) == load_manifest()
    assert build.stale_files(files) == []


def test_a_build_of_some_chapters_names_a_new_chapter_it_leaves_out(monkeypatch):
    """A chapter added to the course table but never built has no manifest entry to keep: a build
    of other chapters says which to add instead of failing with a KeyError."""
    from gptcourse.checking import course
    from grader.authoring import build

    monkeypatch.setattr(build, "build_manifest", lambda chapters=None: {chapter: {} for chapter in chapters})
    course.register_chapter(course.Chapter("99_unbuilt", "Never built", 10, (course.task("99.1", ("f",), "B", "F"),)))
    try:
        with pytest.raises(SystemExit, match="no entry for 99_unbuilt yet: build it too"):
            build.course_manifest(["01_text_data"])
    finally:
        course.unregister_chapter("99_unbuilt")
