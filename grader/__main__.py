"""Command line of the course: building it, and grading it.

    python -m grader build [--check] [--chapters CH...]   (the release, the hidden reference and the fixtures, from the masters)
    python -m grader workshop --out DIR   (the workshop edition: the release with folded answers)
    python -m grader grade PATH... --out DIR [--device auto|cpu|cuda] [--jobs N] [--sandbox auto|bwrap|none]
                                 [--cluster tcp://HOST:PORT]   (the jobs on a Dask cluster's workers)
                                 [--policy policy.toml [--submitted-at CSV] [--file-times]]   (late penalties)
    python -m grader apply-policy DIR (--policy policy.toml [--submitted-at CSV] | --no-policy)
                                 (due dates, extensions, tokens and penalties again, without regrading)
    python -m grader report DIR     (rebuilds DIR/report.html, the class report)
    python -m grader export DIR --format canvas|moodle --out FILE [--roster CSV] [--per chapter|task]
    python -m grader push-nbgrader DIR --db URL --assignment NAME [--course-dir COURSE]
    python -m grader similarity DIR [--reference FOLDER ...]   (the pairs of students whose task cells are alike)
    python -m grader push-lms DIR --platform PLATFORM.json [--chapter NAME] [--roster CSV] [--dry-run]
                                 (the chapter scores into the LMS over LTI 1.3; docs/grading.md)
    python -m grader lms-keys --key KEY.pem   (the tool's key pair for the LMS; prints its public half)
    python -m grader regrade DIR (--student ID... | --task T... | --everyone) [PATH...]
    python -m grader gradescope --out autograder.zip [--chapters CH...]   (a Gradescope autograder)
    python -m grader leaderboard PATH... --out DIR [--jobs N]   (the class challenge of chapter 05, re-run and ranked)
    python -m grader where TASK     (what the task must do and where its pieces live: docs/contract.md)
    python -m grader hub init DIR [--roster CSV | --workshop N]; python -m grader hub start DIR   (docs/hub.md)
"""
import argparse
import importlib
import os
import sys

from grader.grading import gradefolder

# The commands other modules own (each has add_parser(commands) and main(args)). A module is
# imported only when its command is named (or for the full --help): build and workshop import
# nbformat and nbgrader, which a grade run does not need. A module may own several commands: its
# add_parser adds them all, and its main reads args.command.
MODULES = {"build": "grader.authoring.build", "workshop": "grader.authoring.workshop", "export": "grader.outputs.exports",
           "push-nbgrader": "grader.nbgrading.push", "regrade": "grader.grading.regrade", "gradescope": "grader.outputs.gradescope",
           "where": "grader.authoring.contract", "hub": "grader.hub.commands",
           "push-lms": "grader.outputs.lms", "lms-keys": "grader.outputs.lms",
           "similarity": "grader.outputs.similarity", "apply-policy": "grader.outputs.apply_policy",
           "leaderboard": "grader.outputs.leaderboard"}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m grader", description="Build and grade the course.")
    commands = parser.add_subparsers(dest="command", required=True)
    g = commands.add_parser("grade", help="grade submissions (notebooks, folders, zips, nbgrader layout)")
    g.add_argument("paths", nargs="+", metavar="PATH")
    g.add_argument("--out", required=True, metavar="DIR", help="where grades.csv, grades.json, feedback/ go")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                   help="auto: CPU, plus CUDA when present (default)")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel workers")
    g.add_argument("--timeout", type=float, default=60.0, help="seconds per task (default 60)")
    g.add_argument("--memory-mb", type=int, default=2048, help="memory per worker beyond torch's own")
    g.add_argument("--seed", type=int, default=None, help="hidden test seed (default: random, kept on resume)")
    g.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "none"],
                   help="where student code runs: bwrap (a bubblewrap sandbox per worker), none (plain "
                        "processes), auto (bwrap when it works here; default). See docs/grading.md")
    g.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help="run the jobs on the workers of a running Dask cluster (tcp://HOST:PORT); this "
                        "process still computes every expected output and verdict. See docs/grading.md")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    from grader.outputs import late  # noqa: E402 - its options only: the module imports nothing heavy

    late.add_policy_options(g)
    # The class report (grader/outputs/class_report.py), rebuilt from a grade run's files.
    rp = commands.add_parser("report", help="rebuild DIR/report.html from DIR/grades.json and DIR/run.json")
    rp.add_argument("dir", metavar="DIR", help="the --out folder of a grade run")
    # Build, workshop, gradebook exports, nbgrader push, regrading, Gradescope, where, hub,
    # similarity: see MODULES.
    named = [name for name in argv[:1] if name in MODULES]
    wanted = named or ([] if argv[:1] in (["grade"], ["report"]) else list(MODULES))
    more = {name: importlib.import_module(MODULES[name]) for name in wanted}
    for module in dict.fromkeys(more.values()):  # once per module: argparse refuses a command added twice
        module.add_parser(commands)
    args = parser.parse_args(argv)
    if args.command in more:
        return more[args.command].main(args)
    if args.command == "report":
        return _write_class_report(args.dir)

    # One start for the run (grader/grading/startup.py): the settings, the preflight, and this
    # machine's worker hosts, which import torch while this process imports the engine.
    from grader.grading import preflight, startup

    from grader.grading.policy import PolicyError

    try:
        settings = startup.settings_from(args)
    except PolicyError as exc:
        return _stopped(exc)
    try:
        runners = startup.start(settings)
    except preflight.PreflightError as exc:
        return _stopped(exc)
    try:
        from grader.grading.engine import grade

        records = grade(args.paths, settings, runners)
    except preflight.PreflightError as exc:
        return _stopped(exc)
    finally:
        runners.close()
    submissions = {r["submission"] for r in records}
    total = round(sum(r["points"] for r in records), 2)
    possible = sum(r["max_points"] for r in records)
    print(f"graded {len(records)} tasks of {len(submissions)} submissions: {total}/{possible} points; "
          f"see {os.path.join(args.out, 'grades.csv')}")
    isolation = _isolation_of(args.out)
    if isolation:
        print(f"isolation: {isolation.get('sandbox')} - {isolation.get('detail')}")
    return 0


def _stopped(error):
    """A run stopped by a machine problem: the message, and exit status 2 (nothing was graded)."""
    print(f"error: {error}", file=sys.stderr)
    return 2


def _isolation_of(out_dir):
    """The isolation this run used, as recorded in run.json."""
    return gradefolder.read_run(out_dir, required=False).get("isolation")


def _write_class_report(out_dir):
    """Rebuild report.html of a grade run's folder; prints its path."""
    from grader.outputs.class_report import write_report

    try:
        records = gradefolder.read_grades(out_dir)
    except gradefolder.GradeFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(write_report(records, out_dir, gradefolder.read_run(out_dir, required=False)))  # says what it can without run.json
    return 0


if __name__ == "__main__":
    sys.exit(main())
