"""A student's cell cannot take the machine under nbgrader either.

The kernels nbgrader starts have the course grader's memory cap (grader/nbgrading/nbgrader_config.py,
gptcourse/checking/kernel_memory.py). A chapter 02 submission whose Task 2.1 keeps allocating
when called, and whose Task 2.3 cell keeps allocating at its top level (after a right class),
is autograded with a small cap so that the allocations fail within seconds: Task 2.1 gets 0 with
the course grader's memory verdict, as `python -m grader grade --memory-mb` gives it; the cells
after Task 2.3 run in a fresh kernel, without what its loop kept; the other tasks keep their
points. nbgrader's Validate, run in-process as the Jupyter server runs it, shows the same
message for Task 2.1.
"""
import json
import os
import shutil

import pytest

from factory import (FILLS_MEMORY_WHEN_CALLED, filled_notebook, grade_id, manifest, records_by_submission, run_grader,
                     without_demos, write_notebook)
from grader.nbgrading import course as nbgrader_course

pytestmark = pytest.mark.slow  # nbgrader autograde, the course grader and Validate on one notebook

CH2, STUDENT, SEED = "02_attention", "hoarder", 4242
CAP_MB = 300  # small, so that a loop reaches it in a fraction of a second

# After a right class, a loop at the top of the cell keeps 4 MB blocks until one fails.
FILLS_MEMORY_AT_TOP_LEVEL = "{2.3}\nkept = []\nwhile True:\n    kept.append(bytearray(4 << 20))\n"
# A cell of the student's own after Task 2.3's check cell: whether what the loop kept is still there.
LOOKS_FOR_WHAT_WAS_KEPT = "print('kept by the loop:', 'kept' in globals())"


def submission(top_level_loop=True):
    """The student's notebook; without Task 2.3's loop for Validate (below)."""
    cells = {"2.1": FILLS_MEMORY_WHEN_CALLED}
    if not top_level_loop:
        return without_demos(filled_notebook(CH2, cells))
    cells["2.3"] = FILLS_MEMORY_AT_TOP_LEVEL.replace("{2.3}", manifest()[CH2]["tasks"]["2.3"]["source"])
    nb = without_demos(filled_notebook(CH2, cells))
    after = next(i for i, cell in enumerate(nb["cells"]) if grade_id(cell) == "check_2_3") + 1
    nb["cells"].insert(after, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                               "source": LOOKS_FOR_WHAT_WAS_KEPT})
    return nb


def capped(config_path):
    """The course directory's nbgrader_config.py with the small cap, as an instructor sets theirs."""
    with open(config_path, "a", encoding="utf-8") as f:
        f.write(f"\nc.Execute.extra_arguments = kernel_arguments(memory_mb={CAP_MB})\n")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("nbgrader_course")
    nbgrader_course.make_course(root, [CH2])
    capped(root / "nbgrader_config.py")
    nbgrader_course.add_submission(root, STUDENT, CH2, submission())
    nbgrader_course.autograde(root, CH2, seed=SEED, device="cpu")
    records = run_grader([root], tmp_path_factory.mktemp("grades"), "--seed", str(SEED), "--device", "cpu",
                         "--memory-mb", str(CAP_MB))
    autograded = json.loads((root / "autograded" / STUDENT / CH2 / f"{CH2}.ipynb").read_text())
    return root, nbgrader_course.scores(root), records_by_submission(records)[STUDENT], autograded


def outputs(nb, cell_id="", source=""):
    """What a cell printed or raised, as one text."""
    cell = next(c for c in nb["cells"] if (cell_id and grade_id(c) == cell_id) or (source and "".join(c["source"]) == source))
    return "\n".join("".join(o.get("text", "")) or f"{o.get('ename')}: {o.get('evalue')}" for o in cell["outputs"])


def test_a_function_that_fills_the_memory_gets_the_course_graders_memory_verdict(graded):
    _, scores, course, autograded = graded
    record = course["2.1"]
    assert scores[(STUDENT, "2.1")] == (0, record["max_points"]) and record["points"] == 0
    assert record["status"] == "memory", record
    assert record["feedback"].startswith("Failed on ") and f"the {CAP_MB} MB memory limit" in record["feedback"]
    assert outputs(autograded, "check_2_1") == f"AssertionError: Task 2.1 (memory): {record['feedback']}"


def test_the_cells_after_a_cell_that_filled_the_memory_run_in_a_fresh_kernel(graded):
    _, scores, course, autograded = graded
    assert "MemoryError" in outputs(autograded, "task_2_3")  # the loop did reach the cap
    assert outputs(autograded, source=LOOKS_FOR_WHAT_WAS_KEPT) == "kept by the loop: False\n"
    for task_id in ("2.2", "2.4", "2.5"):
        assert scores[(STUDENT, task_id)] == (course[task_id]["max_points"],) * 2, outputs(autograded, f"check_{task_id.replace('.', '_')}")
        assert course[task_id]["points"] == course[task_id]["max_points"]


def test_both_graders_give_the_task_whose_cell_filled_the_memory_the_same_points(graded):
    """The course grader skips the cell's failing line and tests the class in the same process,
    with the memory still held; nbgrader runs the check cell in the same kernel for the same reason."""
    _, scores, course, autograded = graded
    assert scores[(STUDENT, "2.3")][0] == course["2.3"]["points"], (course["2.3"], outputs(autograded, "check_2_3"))


def test_validate_shows_the_memory_message(graded, tmp_path, monkeypatch):
    """nbgrader's Validator in-process, configured as the Validate button's handler configures it
    (the nbgrader_config.py of the folder the server runs in): its kernel has the cap, and the
    check cell says so in the course grader's words.

    Without Task 2.3's loop: Validate runs nbgrader's own Execute, which does not replace a kernel
    left full, and torch's BLAS (OpenBLAS) ends the process when it cannot get its buffers
    there ("Memory allocation still failed after 10 retries, giving up"): nbgrader then reports
    that the kernel died, for the whole notebook."""
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    root = graded[0]
    monkeypatch.setattr(os, "environ", dict(os.environ))  # the configuration sets a variable
    shutil.copy(root / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    monkeypatch.chdir(tmp_path)
    app = NbGrader()
    app.load_config_file()
    path = write_notebook(submission(top_level_loop=False), tmp_path / "student" / f"{CH2}.ipynb")
    failed = Validator(config=app.config).validate(str(path))["failed"]
    shown = next(cell["raw_error"] for cell in failed if cell["source"] == 'check("2.1", simple_self_attention)')
    check_2_1 = " ".join(shown.split())  # the self-check breaks its lines at 72 characters
    assert "Task 2.1 (simple_self_attention) failed: " in check_2_1
    assert f"your code used more than the {CAP_MB} MB memory limit and was stopped at line 4 of your solution cell" in check_2_1
    assert "Traceback" not in shown
