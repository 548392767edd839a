"""nbgrader configuration of the course (copy it into your nbgrader course directory).

The masters (solutions/NN_name.ipynb) go to source/NN_name/NN_name.ipynb; then
`nbgrader generate_assignment NN_name` makes the student version and
`nbgrader autograde NN_name` grades submissions with the hidden tests, which import the
`grader` package: install it (`pip install -e .` in the course checkout) where autograde runs.
"""
import os

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

# The notebooks' carry-over cells bind the reference versions of earlier tasks while nbgrader
# grades (as the course grader does), from this module; the kernels inherit the variable.
os.environ.setdefault("GPTCOURSE_REFERENCE_MODULE", "grader.reference")

c.CourseDirectory.course_id = "gpt-from-scratch"
# Stubs students see in place of each solution region.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# A student who deletes a check cell still gets it graded: autograde puts it back.
c.OverwriteCells.add_missing_cells = True
# Every graded cell runs in seconds (chapter 05 skips its training runs while nbgrader grades,
# see gptcourse.notebook.being_graded); an infinite loop should not hold the batch.
c.Execute.timeout = 120

# Hanging and crashing cells cost their own task only, with the course grader's message: the
# course's execute step (grader/nbgrading/execute.py) replaces nbgrader's. A task cell, and the
# hidden tests of its check cell, get the course grader's time limit per task (its --timeout).
# A policy.toml in the course directory (due dates, extensions, late tokens and penalties,
# docs/grading.md) is applied by the same call's late-penalty step, as the course grader's --policy.
from grader.nbgrading.execute import use_course_execute  # noqa: E402 - after get_config, as nbgrader expects

use_course_execute(c, task_timeout=60)

# A student's cell cannot take the machine: every kernel nbgrader starts (autograde, and Validate
# in the student's Jupyter server) gets the course grader's memory cap, RLIMIT_DATA at what it
# holds once torch is loaded plus memory_mb (python -m grader grade --memory-mb, 2048 by default),
# set as it starts by gptcourse/checking/kernel_memory.py. A cell over it fails with the course
# grader's memory message and costs its own task. memory_mb=0: no cap.
from gptcourse.checking.kernel_memory import kernel_arguments  # noqa: E402

c.Execute.extra_arguments = kernel_arguments(memory_mb=2048)

