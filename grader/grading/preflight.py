"""What a grading run needs from the machine, checked before the first task is graded.

A machine problem must never become a student's zero: a data set that cannot be had, the GPT-2
tokenizer's files, a GPU asked for and missing, bubblewrap asked for and unusable, an output
folder that cannot be written. Each is checked up front and reported together, in one message
that says what is missing and how to provide it; the command then exits with status 2 and
grades nothing (python -m grader grade, regrade).

Two checks need the grading process itself:
- before the first task, the data sets of the chapters being graded (each public chapter module
  lists its own in GRADING_DATA: what its cases, its setup cell and its probes read);
- during the run, a task that cannot be prepared for any submission, always with the same
  error, is a problem of the grader or the machine: the run stops instead of writing zeros
  (engine._grade_pending), and those tasks stay ungraded, so the next grade or regrade of the
  folder grades them.
"""
import os
import tempfile

from gptcourse.checking.tasks import chapter_module

MIRROR_HELP = ("put the course's data files into a folder and set GPTCOURSE_DATA_MIRROR to it (the files and "
               "their names are listed in docs/publishing.md; a checkout's Makefile uses ../shared/data), or run "
               "the grader once on a machine with internet, which fills the cache (GPTCOURSE_CACHE_DIR, default "
               "~/.cache/gptcourse)")


class PreflightError(Exception):
    """The run cannot grade fairly on this machine; the message says what is missing and what to do."""


def raise_if(problems):
    if problems:
        heading = "cannot grade: this machine lacks what the run needs (nothing was graded)"
        raise PreflightError("\n".join([heading] + [f"  - {problem}" for problem in problems]))


def machine_problems(out_dir, device, sandbox):
    """What the options ask of the machine: a writable output folder (unless out_dir is None),
    CUDA for --device cuda, bubblewrap for --sandbox bwrap. Cheap: checked before the worker hosts
    start, on the grading machine (grader/grading/startup.py) and on each worker of a cluster
    (grader/cluster/worker.py)."""
    problems = []
    problem = output_folder_problem(out_dir) if out_dir is not None else None
    if problem:
        problems.append(problem)
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            problems.append("--device cuda: no CUDA GPU is available to PyTorch here (torch "
                            f"{torch.__version__}); grade with --device cpu, or on a machine with a GPU and a "
                            "CUDA build of PyTorch")
    if sandbox == "bwrap":
        from grader.grading.sandbox import bwrap_problem

        problem = bwrap_problem()
        if problem:
            problems.append(f"--sandbox bwrap: {problem}; or grade with --sandbox none (see docs/grading.md)")
    return problems


def output_folder_problem(out_dir):
    """None when out_dir exists (or can be made) and a file can be written in it."""
    try:
        os.makedirs(out_dir, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out_dir, prefix=".preflight-"):
            pass
    except OSError as exc:
        return f"the output folder {out_dir} cannot be written ({exc.strerror or exc}): choose another --out"
    return None


def data_problems(chapters):
    """Each data set the chapters' grading reads, fetched now (mirror, cache, or download when there
    is internet) and checked; and the GPT-2 tokenizer built from its files. [] when all is there."""
    from gptcourse import data

    needed = {}
    for chapter in chapters:
        for name in chapter_module(chapter).GRADING_DATA:  # every public chapter module says (even ())
            needed.setdefault(name, []).append(chapter)
    problems = []
    for name, users in needed.items():
        try:
            data.fetch(name)
        except Exception as exc:  # noqa: BLE001 - whatever stops the file from being had is reported
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            problems.append(f"the data set {name!r} ({data.DATASETS[name].filename}), needed to grade "
                            f"{', '.join(users)}: {reason}")
    if problems:
        problems.append(f"to provide them: {MIRROR_HELP}")
    elif set(needed) & set(_tokenizer_files()):
        problem = _tokenizer_problem()
        if problem:
            problems.append(problem)
    return problems


def _tokenizer_files():
    from gptcourse.tokenizer import GPT2_FILES

    return GPT2_FILES


def _tokenizer_problem():
    from gptcourse.tokenizer import load_if_available

    error = load_if_available()
    if error is None:
        return None
    return (f"tiktoken's GPT-2 encoding could not be built from its files ({type(error).__name__}: "
            f"{str(error).splitlines()[0] if str(error) else ''}); TIKTOKEN_CACHE_DIR must be a writable folder "
            f"or unset")
