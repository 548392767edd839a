"""A student's cell cannot take the hub's machine: Validate, run as the student with the hub's
configuration, stops a cell that allocates without end at the kernel's memory cap and says so in
the course's words.

nbgrader's `validate` command runs the same Validator, with the same configuration, as the
Validate button (the server extension calls it in the student's server); here it runs as the
student's own account, with the environment the hub gives their server, so the kernel it starts
is the hub's capped python3 kernel. (tests/notebooks/test_nbgrader_memory.py tests the cap with
the course's own nbgrader configuration, under autograde too.) Needs root: marked slow.
"""
import sys

import pytest

from factory import FILLS_MEMORY_WHEN_CALLED, filled_notebook, without_demos, write_notebook
from grader.hub import commands as course_hub
from hub_machine import as_user
from lab_in_browser import free_port

pytestmark = pytest.mark.slow

CAP_MB = 300  # small, so that the loop reaches it in a fraction of a second


def test_validate_stops_a_cell_that_fills_the_memory_with_the_courses_message(machine):
    folder = machine.folder()
    (folder / "roster.csv").write_text(f"username\n{machine.students[0]}\n")
    hub_dir = folder / "hub"
    course_hub.init(hub_dir, roster=str(folder / "roster.csv"), instructor=machine.instructor, port=free_port(),
                    memory_mb=CAP_MB)
    student = machine.students[0]
    notebook = write_notebook(without_demos(filled_notebook("02_attention", {"2.1": FILLS_MEMORY_WHEN_CALLED})),
                              folder / "02_attention.ipynb")
    notebook.chmod(0o644)

    result = as_user(hub_dir, student, sys.executable, "-m", "nbgrader", "validate", notebook)
    shown = " ".join(result.stdout.split())
    assert "VALIDATION FAILED ON 1 CELL(S)" in shown, result.stdout + result.stderr
    assert f"used more than the {CAP_MB} MB memory limit" in shown, shown
    assert "line 4 of your solution cell" in shown, shown
    assert "Traceback" not in shown, shown
