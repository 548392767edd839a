"""Where things are in the repository, and how to run nbgrader: shared by grader.authoring.build (which
generates the release) and grader.nbgrading.course (which drives an nbgrader course), so that
neither has to import the other; and the reference manifest, which the grading tools read
without importing the engine (or torch)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = os.path.join(ROOT, "solutions")
COURSE = os.path.join(ROOT, "course")
REFERENCE = os.path.join(ROOT, "grader", "reference")
FIXTURES = os.path.join(COURSE, "gptcourse", "checking", "fixtures")
NBGRADER_CONFIG = os.path.join(ROOT, "grader", "nbgrading", "nbgrader_config.py")
MANIFEST = os.path.join(REFERENCE, "manifest.json")
# The course grader's time limit per task, for the hidden tests nbgrader runs in a student's kernel
# (set by grader/nbgrading/execute.py, read by grader/nbgrading/bridge.py).
TIMEOUT_ENV_VAR = "GPTCOURSE_GRADER_TIMEOUT"


def load_manifest():
    """The reference manifest (grader/reference/manifest.json, written by the build): per chapter,
    its setup cells and, per task, its points, its reference source and its check cell."""
    import json

    with open(MANIFEST, encoding="utf-8") as f:
        return json.load(f)


def master_path(chapter):
    """The instructor master of a chapter: solutions/NN_name.ipynb."""
    return os.path.join(SOLUTIONS, f"{chapter}.ipynb")


def nbgrader_command(*args):
    """nbgrader run with this interpreter; its tools (alembic) must be on PATH too."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return [sys.executable, "-m", "nbgrader", *args], env
