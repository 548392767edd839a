"""The student release leaks nothing and is a valid nbgrader assignment."""
import json
import re
import subprocess

import pytest

from factory import REPO, grade_id, manifest
from grader.authoring.build import nbgrader_command

CHAPTERS = ("02_attention", "03_multihead_attention")


def cells(path):
    return json.loads(path.read_text())["cells"]


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def solution_regions(chapter):
    """The masters' solution regions, as lists of their non-blank, non-comment lines."""
    regions = []
    for cell in cells(REPO / "solutions" / f"{chapter}.ipynb"):
        for line in source(cell).splitlines():
            stripped = line.strip()
            if stripped == "### BEGIN SOLUTION":
                regions.append([])
            elif stripped == "### END SOLUTION":
                regions[-1] = tuple(regions[-1])
            elif regions and isinstance(regions[-1], list) and stripped and not stripped.startswith("#"):
                regions[-1].append(stripped)
    return regions


def leaked_runs(regions, text, run=3):
    """Runs of `run` consecutive solution lines that appear consecutively in `text`.

    Hints may quote a single line of a solution (a buffer registration, say); three lines
    in a row are a piece of the solution itself.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    windows = {tuple(lines[i:i + run]) for i in range(len(lines) - run + 1)}
    return [r[i:i + run] for r in regions for i in range(len(r) - run + 1) if tuple(r[i:i + run]) in windows]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_contains_no_solution_and_no_hidden_test(chapter):
    release_cells = cells(REPO / "course" / f"{chapter}.ipynb")
    release = "\n".join(source(c) for c in release_cells)
    code = "\n".join(source(c) for c in release_cells if c["cell_type"] == "code")
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "run_hidden_tests"):
        assert marker not in release
    assert not re.search(r"^\s*(from|import) grader", code, re.MULTILINE)
    regions = solution_regions(chapter)
    assert sum(len(r) for r in regions) > 20  # the check below looks at real solution code
    assert not leaked_runs(regions, release)
    master = "\n".join(source(c) for c in cells(REPO / "solutions" / f"{chapter}.ipynb"))
    assert leaked_runs(regions, master)  # the detector finds the solutions where they are


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_has_a_stub_in_every_task_cell_and_the_same_cells_as_the_master(chapter):
    release = cells(REPO / "course" / f"{chapter}.ipynb")
    master = cells(REPO / "solutions" / f"{chapter}.ipynb")
    assert [c["id"] for c in release] == [c["id"] for c in master]
    tasks = [c for c in release if grade_id(c).startswith("task_")]
    assert tasks and all("raise NotImplementedError()" in source(c) for c in tasks)
    # A carry-over cell is the same in the release as in the master: it loads the student's
    # own earlier notebook (gptcourse.carry), so there is nothing to stub out.
    carries = [c for c in release if grade_id(c).startswith("carry_")]
    assert all("raise NotImplementedError()" not in source(c) for c in carries)
    points = {grade_id(c): c["metadata"]["nbgrader"]["points"] for c in release if grade_id(c).startswith("check_")}
    expected = {f"check_{t.replace('.', '_')}": v["points"] for t, v in manifest()[chapter]["tasks"].items()}
    assert points == expected


def test_public_package_contains_no_reference_code():
    package = REPO / "course" / "gptcourse"
    text = "\n".join(p.read_text() for p in package.rglob("*.py"))
    assert not re.search(r"^\s*(from|import) grader", text, re.MULTILINE)
    for chapter in CHAPTERS:
        assert not leaked_runs(solution_regions(chapter), text)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_validates_as_an_nbgrader_assignment(chapter):
    """`nbgrader validate --invert`: every check cell fails on the untouched release."""
    command, env = nbgrader_command("validate", "--invert", str(REPO / "course" / f"{chapter}.ipynb"))
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "Success" in output, output[-3000:]
