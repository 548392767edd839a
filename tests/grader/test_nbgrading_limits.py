"""The limits of the nbgrader side: a task cell gets the course grader's time limit through
nbclient's public per-cell hook (timeout_func), and no nbgrader command runs forever."""
import sys

import nbformat
import pytest

from grader.nbgrading import course as nbgrader_course
from grader.nbgrading.execute import CourseExecute


def cell_with_grade_id(grade_id):
    cell = nbformat.v4.new_code_cell("pass")
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "solution": True}
    return cell


def test_a_task_cell_runs_as_long_as_the_course_grader_lets_a_task_run():
    execute = CourseExecute(task_timeout=7, timeout=300)
    assert execute._cell_timeout(cell_with_grade_id("task_2_1")) == 7
    assert execute._cell_timeout(cell_with_grade_id("setup")) == 300


def test_an_nbgrader_command_that_hangs_is_stopped(monkeypatch, tmp_path):
    import os

    monkeypatch.setattr(nbgrader_course, "nbgrader_command",
                        lambda *args: ([sys.executable, "-c", "import time; print('started'); time.sleep(30)"],
                                       dict(os.environ)))
    with pytest.raises(RuntimeError, match=r"did not finish within 1 s and was stopped"):
        nbgrader_course.run_nbgrader(tmp_path, "autograde", "02_attention", timeout=1)
