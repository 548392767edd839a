"""A Gradescope autograder built from this grader.

    python -m grader gradescope --out autograder.zip [--chapters CH...] [--seed N] [--jobs N]
                                [--timeout S] [--memory-mb M] [--sandbox auto|bwrap|none]
                                [--visibility visible|after_due_date|after_published|hidden]

The zip follows Gradescope's autograder specification (gradescope-autograders.readthedocs.io,
"Autograder Specifications"; the same text is in the docs folder of github.com/gradescope/autograder_samples):
`setup.sh` and `run_autograder` at its root. Gradescope unpacks the zip into /autograder/source,
runs setup.sh once when it builds the image, and for every submission puts the student's files
into /autograder/submission/ and runs /autograder/run_autograder (working directory /autograder),
which must write /autograder/results/results.json.

What the zip holds (it becomes /autograder/source):
    setup.sh, run_autograder   grader/outputs/gradescope_scripts/, torch's version filled in
    gradescope.json            the settings given here: chapters, seed, limits, visibility, and the
                               late policy (--policy), applied to Gradescope's submission time, and
                               whether the class challenge runs (--challenge: Gradescope's leaderboard)
    requirements.txt           what the grader imports while grading, besides the course package
    course/                    the course package gptcourse (installed by setup.sh)
    grader/                    this package: engine, reference, hidden cases (run from source/)
    data/                      the course's data sets and tiktoken's GPT-2 files, as a data mirror

For each submission (`python -m grader.outputs.gradescope run`, what run_autograder starts), the
notebooks of the zip's chapters are copied into a folder of their own and graded there with
`python -m grader grade`, as one submission, offline (GPTCOURSE_DATA_MIRROR is source/data).
Its grades.json becomes results.json: one test per task of the chapters (a chapter without a
notebook gives 0 points for each of its tasks, and says so), the output of each test being that
task's section of feedback/<submission>.md, and stdout (the grader's log) hidden from students.
A problem of the grading machine (the grade command failed) gives a results.json without any
score that says so: it is never the student's 0.

Every path is under one root, /autograder unless `--root` (or AUTOGRADER_ROOT for the two
scripts) says otherwise: the tests use a temporary folder for it.
"""
import argparse
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

from gptcourse.checking.tasks import chapter_names, tasks_of
from grader.grading import gradefolder
from grader.grading.policy import PolicyError
from grader.paths import ROOT

DEFAULT_ROOT = "/autograder"
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gradescope_scripts")
REPOSITORY = ROOT
CONFIG = "gradescope.json"
# Gradescope's graders have no GPU: the CPU build is a fraction of the default (CUDA) download.
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# The instructor package's requirements that `python -m grader grade` imports (submissions.py reads
# old notebooks with nbformat; the progress bar is tqdm's). The rest of it (nbgrader, JupyterLab,
# nbclient, ipykernel) is for building and nbgrader, not for grading.
GRADING_REQUIREMENTS = ("nbformat", "tqdm")
# Data sets larger than this are not bundled: the only one is GPT-2's weights, which grading never
# loads (the hidden cases make their own small checkpoints).
MAX_BUNDLED_DATA_BYTES = 10 * 2**20
SUBMISSION_ID = "submission"
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
FIXED_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # every entry's date: the same settings give the same zip


class GradescopeError(Exception):
    """The autograder cannot be built as asked (the message says why)."""


# ------------------------------------------------------------------------------------------
# Building the zip
# ------------------------------------------------------------------------------------------

def build(out_file, settings):
    """Write the autograder zip; returns the number of files in it."""
    from grader.grading.gradefolder import write_atomically

    entries = list(bundle_entries(settings))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, FIXED_ZIP_TIME)
            info.external_attr = (0o100000 | mode) << 16  # a regular file with these permissions
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    os.makedirs(os.path.dirname(os.path.abspath(out_file)), exist_ok=True)
    write_atomically(out_file, buffer.getvalue())
    return len(entries)


def bundle_entries(settings):
    """(name in the zip, bytes, permissions) of everything the autograder needs."""
    yield "setup.sh", setup_script().encode(), 0o755
    yield "run_autograder", _read(os.path.join(SCRIPTS, "run_autograder")), 0o755
    yield CONFIG, (json.dumps(settings, indent=1) + "\n").encode(), 0o644
    yield "requirements.txt", ("\n".join(grading_requirements()) + "\n").encode(), 0o644
    course = os.path.join(REPOSITORY, "course")
    for name in ("pyproject.toml", "README.md"):
        yield f"course/{name}", _read(os.path.join(course, name)), 0o644
    yield from _package_files(os.path.join(course, "gptcourse"), "course/gptcourse")
    yield from _package_files(os.path.join(REPOSITORY, "grader"), "grader")
    for relative, path in bundled_data():
        yield f"data/{relative}", _read(path), 0o644


def setup_script():
    """setup.sh with the torch of this machine, from PyTorch's CPU index."""
    import torch

    version = torch.__version__.split("+")[0]  # "2.13.0+cpu" -> "2.13.0"
    text = _read(os.path.join(SCRIPTS, "setup.sh")).decode()
    return text.replace("@TORCH_SPEC@", f"torch=={version}").replace("@TORCH_INDEX@", CPU_TORCH_INDEX)


def grading_requirements():
    """GRADING_REQUIREMENTS with their bounds as the instructor package's pyproject.toml declares them."""
    with open(os.path.join(REPOSITORY, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    chosen = []
    for name in GRADING_REQUIREMENTS:
        declared = re.search(rf'"({re.escape(name)}\s*[<>=!~][^"]*)"', text)
        if declared is None:
            raise GradescopeError(f"pyproject.toml does not list {name}, which the grader imports")
        chosen.append(declared.group(1))
    return chosen


def bundled_data():
    """(path in the mirror, local file) of every course data set up to MAX_BUNDLED_DATA_BYTES,
    fetched (checked by sha256) from the data mirror, the cache or the network."""
    from gptcourse import data

    found = []
    for dataset in data.DATASETS.values():
        if dataset.size <= MAX_BUNDLED_DATA_BYTES:
            try:
                found.append((dataset.filename, str(data.fetch(dataset.name))))
            except (OSError, ValueError) as exc:
                raise GradescopeError(f"the data set {dataset.name!r} could not be bundled ({exc}); "
                                      f"set GPTCOURSE_DATA_MIRROR to a folder that holds it") from None
    return found


def _package_files(folder, prefix):
    """A package's files, without caches and build leftovers."""
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info"))
        for name in sorted(files):
            if not name.endswith((".pyc", ".pyo")) and not name.startswith("."):
                path = os.path.join(here, name)
                mode = 0o755 if os.access(path, os.X_OK) else 0o644
                yield f"{prefix}/{os.path.relpath(path, folder).replace(os.sep, '/')}", _read(path), mode


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ------------------------------------------------------------------------------------------
# Grading one submission (run_autograder)
# ------------------------------------------------------------------------------------------

def run(root):
    """Grade root/submission/ and write root/results/results.json; returns the exit status."""
    started = time.time()
    settings = _read_json(os.path.join(root, "source", CONFIG))
    with tempfile.TemporaryDirectory(prefix="gradescope-") as work:
        results = grade_submission(root, settings, work)
    results["execution_time"] = round(time.time() - started)
    results_dir = os.path.join(root, "results")
    os.makedirs(results_dir, exist_ok=True)
    from grader.grading.gradefolder import write_atomically

    write_atomically(os.path.join(results_dir, "results.json"), json.dumps(results, indent=1))
    print(f"wrote {os.path.join(results_dir, 'results.json')}: "
          f"{results.get('score', 'no score')} / {sum(t.get('max_score', 0) for t in results['tests'])}")
    return 0 if "score" in results else 1


def grade_submission(root, settings, work):
    """results.json's content for root/submission/, graded in the scratch folder `work`."""
    staged, notes = stage_submission(os.path.join(root, "submission"), os.path.join(work, "staged"),
                                     settings["chapters"])
    if not staged:
        return results_json([], settings, None, notes)  # nothing to grade: 0 for every task, and what to upload
    out = os.path.join(work, "graded")
    command = grade_command(os.path.join(work, "staged"), out, settings)
    print("$", shlex.join(command), flush=True)
    source = os.path.join(root, "source")
    if subprocess.run(command, cwd=source, env=_grading_env(source, work)).returncode != 0:
        return machine_problem_results("the grade command failed; its log is in the autograder's stdout")
    records = gradefolder.read_grades(out)
    if settings.get("policy"):
        records = late_records(records, settings["policy"], _read_json(os.path.join(root, "submission_metadata.json")))
    results = results_json(records, settings, gradefolder.read_run(out), notes)
    if settings.get("challenge") and "05_pretraining" in settings["chapters"]:
        add_challenge(results, challenge_row(os.path.join(work, "staged"), os.path.join(work, "challenge"),
                                             settings["challenge"], source, work))
    return results


def challenge_row(staged, out, challenge_settings, source, work):
    """The submission's row of the class challenge (grader/outputs/leaderboard.py), trained here
    with the grade's sandbox setting; None when the leaderboard command itself failed."""
    command = [sys.executable, "-m", "grader", "leaderboard", staged, "--out", out, "--jobs", "1",
               "--budget-tokens", str(challenge_settings["budget_tokens"]),
               "--time-limit", str(challenge_settings["time_limit"])]
    print("$", shlex.join(command), flush=True)
    if subprocess.run(command, cwd=source, env=_grading_env(source, work)).returncode != 0:
        return None
    from grader.outputs import challenge_report

    board = challenge_report.read_board(out) or {"entries": []}
    return next((row for row in board["entries"] if row["student"] == SUBMISSION_ID), None)


def add_challenge(results, row):
    """Gradescope's leaderboard values of the entry (Gradescope shows each student's pseudonym
    beside them, and ranks them) and the challenge's line at the top of the output."""
    from grader.outputs import challenge_report

    values = challenge_report.gradescope_leaderboard(row)
    if values:
        results["leaderboard"] = values
    if row is None:
        line = "**Class challenge:** the entry could not be run (the autograder's log says why)."
    elif row.get("status") != "ok":
        line = f"**Class challenge:** your entry was not scored: {row.get('detail')}."
    else:
        line = (f"**Class challenge:** private validation loss {row['private_loss']:.4f} (public "
                f"{row['public_loss']:.4f}); Gradescope's leaderboard ranks it among the class.")
    results["output"] = line + "\n\n" + results["output"]


def late_records(records, policy_data, metadata):
    """The records with the bundled late policy applied (grader/outputs/late.py): the submission's
    time is Gradescope's own (created_at in submission_metadata.json), the student is the first
    submitter's email (the extensions CSV names students that way). Tokens count only over the
    chapters of this one submission: Gradescope shows no other assignment's submissions."""
    from grader.grading.policy import parse_moment, UTC
    from grader.outputs import late

    setting = late.Setting.from_data(policy_data)
    users = metadata.get("users") or [{}]
    student = str(users[0].get("email") or users[0].get("name") or SUBMISSION_ID)
    submitted = parse_moment(str(metadata["created_at"]), UTC, "submission_metadata.json created_at")
    setting.csv_times = {(student, record["chapter"]): submitted for record in records}
    penalized = late.apply([dict(record, submission=student) for record in records], setting, {})
    return [dict(record, submission=SUBMISSION_ID) for record in penalized]


def grade_command(staged, out, settings):
    """`python -m grader grade` with the zip's settings, run from the zip's copy of the grader."""
    command = [sys.executable, "-m", "grader", "grade", staged, "--out", out, "--quiet", "--device", "auto",
               "--jobs", str(settings["jobs"]), "--timeout", str(settings["timeout"]),
               "--memory-mb", str(settings["memory_mb"]), "--sandbox", settings["sandbox"]]
    if settings.get("seed") is not None:
        command += ["--seed", str(settings["seed"])]
    return command


def stage_submission(submission_dir, staged_dir, chapters):
    """Copy the submission's notebooks of `chapters` into staged_dir/<SUBMISSION_ID>/, where the grader
    sees them as one submission; returns (whether any was copied, notes for the student).

    The grader's own reader finds the notebooks and their chapters (any folder depth, links that
    leave the submission not followed); notebooks of other chapters are left out, so that a student
    who uploads every notebook is graded on this assignment's chapters only, in its time limit."""
    from grader.grading.submissions import discover, readable

    target = os.path.join(staged_dir, SUBMISSION_ID)
    os.makedirs(target)
    with tempfile.TemporaryDirectory() as view:
        os.symlink(os.path.abspath(submission_dir), os.path.join(view, SUBMISSION_ID))
        found = discover([view], os.path.join(view, ".unpacked")) if os.path.isdir(submission_dir) else []
        notebooks = [nb for submission in found for nb in submission.notebooks]
        base = os.path.join(view, SUBMISSION_ID)
        copied, notes = 0, []
        for notebook in notebooks:
            relative = os.path.relpath(notebook.path, base)
            if notebook.chapter in chapters:
                destination = os.path.join(target, relative)
                os.makedirs(os.path.dirname(destination), exist_ok=True)
                shutil.copyfile(notebook.path, destination)
                copied += 1
            elif notebook.chapter:
                notes.append(f"`{readable(relative)}` is chapter {notebook.chapter}, not part of this assignment: "
                             f"not graded")
            else:
                notes.append(f"`{readable(relative)}` is not graded: {notebook.error or 'its chapter is unknown'}")
    return copied > 0, notes


def _grading_env(source, work):
    """The grade command's environment: the data from the zip, a cache of its own."""
    env = dict(os.environ)
    env["GPTCOURSE_DATA_MIRROR"] = os.path.join(source, "data")
    env["GPTCOURSE_CACHE_DIR"] = os.path.join(work, "cache")
    env.pop("TIKTOKEN_CACHE_DIR", None)  # tiktoken's files are copied from the mirror into that cache
    return env


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ------------------------------------------------------------------------------------------
# results.json
# ------------------------------------------------------------------------------------------

def results_json(records, settings, run_info, notes):
    """Gradescope's results.json for one submission's task records (from grades.json)."""
    from grader.paths import load_manifest
    from grader.outputs.report import feedback_summary, graded_with, task_feedback

    manifest = load_manifest()
    by_task = {r["task"]: r for r in records}
    rows = [by_task.get(task.id) or _missing(task, manifest)
            for chapter in settings["chapters"] for task in tasks_of(chapter)]
    tests = [{
        "name": f"Task {r['task']} [{r['level']}]: {', '.join(r['names'])}",
        "number": r["task"],
        "score": r["points"],
        "max_score": r["max_points"],
        "status": "passed" if r["status"] == "passed" else "failed",
        "output": "\n".join(task_feedback(r)).strip() + "\n",
        "output_format": "md",
        "tags": [r["chapter"]],
        "visibility": settings["visibility"],
    } for r in rows]
    summary = feedback_summary(SUBMISSION_ID, rows)[2:]  # without the "# Feedback for" heading
    summary += [f"- {note}" for note in notes]
    if run_info:
        summary += ["", graded_with(run_info)]
    return {
        "score": round(sum(t["score"] for t in tests), 2),
        "output": "\n".join(summary).strip() + "\n",
        "output_format": "md",
        "visibility": settings["visibility"],
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def _missing(task, manifest):
    """A task whose chapter has no notebook in the submission: 0 points, and what to upload."""
    return {"task": task.id, "chapter": task.chapter, "names": list(task.names), "level": task.level,
            "notebook": "no notebook", "status": "failed", "points": 0,
            "max_points": manifest[task.chapter]["tasks"][task.id]["points"], "notes": [],
            "feedback": f"No notebook of chapter {task.chapter} was found in your submission: upload your "
                        f"`{task.chapter}.ipynb`."}


def machine_problem_results(why):
    """results.json when grading itself failed: a message and no score, never a 0 for the student."""
    message = (f"The autograder could not grade this submission because of a problem on the grading "
               f"machine, not in your notebooks ({why}). Your instructor can see the details and run "
               f"the autograder again.")
    return {"output": message, "stdout_visibility": "hidden",
            "tests": [{"name": "Autograder problem", "status": "failed", "output": message}]}


# ------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------

def add_parser(commands):
    p = commands.add_parser("gradescope", help="write a Gradescope autograder (zip) that grades with this grader")
    p.add_argument("--out", required=True, metavar="ZIP", help="the autograder zip to write")
    chapters = chapter_names()
    p.add_argument("--chapters", nargs="+", choices=chapters, default=list(chapters), metavar="CHAPTER",
                   help=f"the chapters the assignment grades (default: all): {', '.join(chapters)}")
    p.add_argument("--seed", type=int, default=None,
                   help="hidden test seed for every submission (default: a new one per submission)")
    p.add_argument("--jobs", type=int, default=1,
                   help="parallel workers (default 1: Gradescope gives half a CPU unless its settings say more)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per task (default 60)")
    p.add_argument("--memory-mb", type=int, default=2048, help="memory per worker beyond torch's own")
    p.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "none"],
                   help="as for grade (default auto: bubblewrap where the container allows it, else none)")
    p.add_argument("--visibility", default="visible", choices=VISIBILITIES,
                   help="when students see the tests (default visible)")
    p.add_argument("--policy", metavar="FILE", help="policy.toml: due dates, extensions and late penalties, "
                                                    "applied to Gradescope's submission time (docs/grading.md)")
    p.add_argument("--challenge", action="store_true",
                   help="with chapter 05: also train the submission's class-challenge entry and fill Gradescope's "
                        "leaderboard (about two minutes more per submission)")
    return p


def main(args):
    settings = {"chapters": [c for c in chapter_names() if c in args.chapters], "seed": args.seed, "jobs": args.jobs,
                "timeout": args.timeout, "memory_mb": args.memory_mb, "sandbox": args.sandbox,
                "visibility": args.visibility}
    try:
        if args.policy:
            from grader.outputs import late

            settings["policy"] = late.Setting.from_files(args.policy).to_data()
        if args.challenge:
            from gptcourse import challenge

            settings["challenge"] = {"budget_tokens": challenge.BUDGET_TOKENS, "time_limit": challenge.TIME_LIMIT_S}
        count = build(args.out, settings)
    except (GradescopeError, PolicyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {count} files, chapters {', '.join(settings['chapters'])}; upload it on "
          f"Gradescope's Configure Autograder page (see docs/grading.md)")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m grader.outputs.gradescope")
    commands = parser.add_subparsers(dest="command", required=True)
    add_parser(commands)
    r = commands.add_parser("run", help="grade one Gradescope submission (what run_autograder does)")
    r.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", DEFAULT_ROOT),
                   help="Gradescope's /autograder folder (default: $AUTOGRADER_ROOT, else /autograder)")
    parsed = parser.parse_args()
    sys.exit(run(parsed.root) if parsed.command == "run" else main(parsed))
