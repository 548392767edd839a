"""An nbgrader course directory for the course's chapters, driven from Python.

nbgrader is the other way to grade this course (the course grader, `python -m grader`, is
the first). Both run the same hidden tests, so they must give the same points; the
agreement test and the grading benchmark use these functions, and instructors can too:

    from grader.nbgrading import course as nbc

    nbc.make_course("nbgrader_course")                   # config, masters, generate_assignment
    nbc.add_submission("nbgrader_course", "alice", "02_attention", notebook)  # or copy files
    nbc.autograde("nbgrader_course", "02_attention", seed=1234, device="cpu")
    nbc.scores("nbgrader_course")   # {("alice", "2.1"): (2.0, 2.0), ...}

The layout is nbgrader's own: source/<chapter>/<chapter>.ipynb (the master),
release/<chapter>/ (what students get), submitted/<student>/<chapter>/<chapter>.ipynb,
autograded/..., gradebook.db. The course grader reads the same submitted/ folder:
`python -m grader grade COURSE_DIR --out grades`.
"""
import json
import os
import shutil
import subprocess

from gptcourse.checking import conventions
from gptcourse.checking.tasks import chapter_names, task_of_cell
from grader.paths import NBGRADER_CONFIG, ROOT, master_path, nbgrader_command

# The kernels nbgrader starts must import `gptcourse` (the student package, in course/) and
# `grader` (the hidden tests, in the repository root). An installed course (`pip install -e`)
# does not need this; a plain checkout does. Absolute paths: nbgrader runs each notebook in
# its own folder, so a relative PYTHONPATH would point nowhere.
IMPORT_PATHS = [os.path.join(ROOT, "course"), ROOT]


def grading_env(seed=None, device=None):
    """Environment for nbgrader and its kernels.

    seed and device fix the hidden tests' cases (read by grader/nbgrading/bridge.py), so that
    autograde and `python -m grader grade --seed S --device D` test with the same cases.
    Without a seed every kernel draws its own. Everything else (GPTCOURSE_DATA_MIRROR, ...)
    is inherited from this process's environment.
    """
    _, env = nbgrader_command()  # a copy of os.environ with this interpreter's bin/ on PATH (alembic)
    env["PYTHONPATH"] = os.pathsep.join(IMPORT_PATHS + [p for p in [env.get("PYTHONPATH")] if p])
    if env.get("GPTCOURSE_DATA_MIRROR"):  # relative to here, not to the notebook's folder
        env["GPTCOURSE_DATA_MIRROR"] = os.path.abspath(env["GPTCOURSE_DATA_MIRROR"])
    if seed is not None:
        env["GPTCOURSE_GRADER_SEED"] = str(seed)
    if device is not None:
        env["GPTCOURSE_GRADER_DEVICE"] = device
    return env


# How long one nbgrader command may take: generate_assignment of nine chapters, or autograde of a
# class, runs for minutes; an nbgrader that hangs (a kernel that never answers) must not hang
# the course's command with it.
NBGRADER_TIMEOUT = 3600


def run_nbgrader(root, *args, env=None, timeout=NBGRADER_TIMEOUT):
    """Run one nbgrader command on the course directory `root`; raise with its log on failure, or
    when it runs past `timeout` seconds."""
    command, _ = nbgrader_command(*args, "--log-level=WARN", f"--CourseDirectory.root={os.path.abspath(root)}")
    try:
        result = subprocess.run(command, cwd=root, env=env or grading_env(), capture_output=True, text=True,
                                timeout=timeout)
    except subprocess.TimeoutExpired as stopped:
        said = [part.decode(errors="replace") if isinstance(part, bytes) else part or ""
                for part in (stopped.stdout, stopped.stderr)]
        raise RuntimeError(f"{' '.join(args)} did not finish within {timeout} s and was stopped:\n"
                           + "\n".join(said)) from None
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def make_course(root, chapters=None):
    """Create an nbgrader course directory: the course's config, the masters as sources, and
    each chapter's student version (generate_assignment also records the chapter, its grade
    cells and their points in the gradebook, which autograde needs)."""
    os.makedirs(root, exist_ok=True)
    shutil.copy(NBGRADER_CONFIG, os.path.join(root, "nbgrader_config.py"))
    chapters = list(chapters or chapter_names())
    for chapter in chapters:
        source_dir = os.path.join(root, "source", chapter)
        os.makedirs(source_dir, exist_ok=True)
        shutil.copy(master_path(chapter), os.path.join(source_dir, f"{chapter}.ipynb"))
    # One nbgrader process for all of them when source/ holds nothing else ("*" is nbgrader's
    # glob over assignment ids): each process takes about 3 s to start, and the releases and the
    # gradebook come out the same as chapter by chapter.
    others = set(os.listdir(os.path.join(root, "source"))) - set(chapters)
    for assignment in (chapters if others or len(chapters) == 1 else ["*"]):
        run_nbgrader(root, "generate_assignment", assignment, "--force")
    return root


def submission_path(root, student, chapter):
    """Where nbgrader expects a student's notebook of a chapter."""
    return os.path.join(root, "submitted", student, chapter, f"{chapter}.ipynb")


def add_submission(root, student, chapter, notebook):
    """Put a student's notebook (a dict / nbformat node, or the path of a .ipynb) in submitted/."""
    path = submission_path(root, student, chapter)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(notebook, (str, os.PathLike)):
        shutil.copy(notebook, path)
    else:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(notebook, f, indent=1)
    return path


def autograde(root, chapter, seed=None, device=None, env=None, timeout=None):
    """Autograde every submission of a chapter (students are added to the gradebook as needed).

    --force grades again submissions that were graded before. Give seed and device to test
    with the same cases as the course grader; env replaces the whole environment instead.
    timeout: seconds per task (the course grader's --timeout) instead of the configuration's.
    """
    options = [f"--CourseExecute.task_timeout={int(timeout)}"] if timeout else []
    return run_nbgrader(root, "autograde", chapter, "--force", *options, env=env or grading_env(seed, device))


def scores(root):
    """{(student, task_id): (score, max_score)} for every autograded check cell in the gradebook."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{os.path.join(os.path.abspath(root), 'gradebook.db')}") as gradebook:
        for assignment in gradebook.assignments:
            for notebook in assignment.notebooks:
                for submitted in gradebook.notebook_submissions(notebook.name, assignment.name):
                    for grade in submitted.grades:
                        if conventions.is_kind(grade.name, conventions.CHECK):
                            found[(submitted.student.id, task_of_cell(grade.name).id)] = (grade.score, grade.max_score)
    return found
