"""Grading some tasks again without touching the others.

    python -m grader regrade DIR (--student ID... | --task T... | --everyone) [PATH...]
                             [--device ...] [--jobs N] [--timeout S] [--memory-mb M] [--sandbox ...] [--quiet]

The usual cases: a student's notebook was replaced (--student), a task's hidden case was
fixed (--task: every student's result of that task is redone), everything again (--everyone).

How: the selected records are removed from DIR/results.jsonl (a new file renamed over the old
one), then the normal resumed grade of the same submissions runs: every other record is kept
byte for byte, with its duration, and is not graded again. The seed stays the run's
(run.json). The submissions are those the folder was graded from, which `grade` records in
run.json ("paths"); PATH arguments replace them (needed for folders graded before the paths
were recorded). --device, --timeout and --memory-mb default to the run's, so that the kept
records stay valid (a record of another device or seed is graded again by any resumed run).

A regrade is a resumed grade: a submission added to the paths since is graded as well, and
a notebook whose file changed (its sha256 differs from the record's) is graded again even
when it was not selected. Do not run it while a grade of the same DIR is running.
"""
import json
import os
import sys

from grader.grading import gradefolder


class RegradeError(Exception):
    """The regrade cannot be done as asked (the message says why and what to do)."""


def read_run(out_dir):
    path = os.path.join(out_dir, gradefolder.RUN)
    try:
        run = gradefolder.read_run(out_dir)
    except gradefolder.GradeFolderError as exc:
        raise RegradeError(str(exc)) from None
    if not isinstance(run.get("seed"), int):
        raise RegradeError(f"{path} has no seed: grade {out_dir} with `python -m grader grade` first")
    return run


def graded_paths(run, given, out_dir):
    """The paths to grade: those given, else run.json's; each must exist."""
    paths = list(given) or run.get("paths")
    if not paths or not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise RegradeError(f"{os.path.join(out_dir, gradefolder.RUN)} does not record which submissions were graded "
                           f"(a folder graded before `regrade` existed): give them after DIR, as they were "
                           f"given to `grade`: python -m grader regrade {out_dir} PATH... --student ...")
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        raise RegradeError(f"the graded path(s) {', '.join(missing)} no longer exist: give the submissions' "
                           f"paths after DIR")
    return paths


def read_results(out_dir):
    """[(line as bytes, record dict or None)] of DIR/results.jsonl, in file order."""
    path = os.path.join(out_dir, gradefolder.RESULTS)
    try:
        with open(path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
    except FileNotFoundError:
        return []
    parsed = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        parsed.append((line, record if isinstance(record, dict) else None))
    return parsed


def selector(students=None, tasks=None, everyone=False):
    """A predicate on records: those to grade again."""
    if everyone:
        return lambda record: True
    if students:
        wanted = set(students)
        return lambda record: record.get("submission") in wanted
    if tasks:
        wanted = set(tasks)
        return lambda record: record.get("task") in wanted
    raise RegradeError("say what to regrade: --student ID..., --task T... or --everyone")


def check_selection(results, students=None, tasks=None):
    """Unknown student ids or task ids are typos: stop before anything is removed."""
    from gptcourse.checking.tasks import TASKS_BY_ID

    known_students = {r.get("submission") for _, r in results if r}
    if students:
        unknown = [s for s in students if s not in known_students]
        if unknown:
            listed = ", ".join(sorted(str(s) for s in known_students)) or "none"
            raise RegradeError(f"no records of {', '.join(map(repr, unknown))} in results.jsonl; the graded "
                               f"submissions are: {listed}")
    if tasks:
        unknown = [t for t in tasks if t not in TASKS_BY_ID]
        if unknown:
            raise RegradeError(f"unknown task(s) {', '.join(unknown)}; the tasks are {', '.join(TASKS_BY_ID)}")
        graded = {r.get("task") for _, r in results if r}
        for task in tasks:
            if task not in graded:
                print(f"note: no student has a record of task {task} (its chapter was not graded): nothing to "
                      f"remove for it", file=sys.stderr)


def remove_records(out_dir, wanted, results=None):
    """Remove the records for which wanted(record) is true from results.jsonl; returns them."""
    results = read_results(out_dir) if results is None else results
    removed = [r for _, r in results if r is not None and wanted(r)]
    if removed:
        kept = b"".join(line for line, r in results if r is None or not wanted(r))
        gradefolder.write_atomically(os.path.join(out_dir, gradefolder.RESULTS), kept)  # bytes: kept lines exactly
    return removed


def _key(record):
    return (record.get("submission"), record.get("notebook_sha"), record.get("task"))


def _by_student(records):
    grouped = {}
    for record in records:
        grouped.setdefault(str(record.get("submission")), []).append(str(record.get("task")))
    return "; ".join(f"{s}: {', '.join(t)}" for s, t in sorted(grouped.items()))


def describe(removed, kept_keys, records):
    """Lines saying which records were graded again and how their points changed."""
    before = {(r.get("submission"), r.get("task")): r for r in removed}
    lines = []
    for record in records:
        if _key(record) in kept_keys:
            continue
        old = before.get((record["submission"], record["task"]))
        now = f"{record['status']} {record['points']}/{record['max_points']}"
        if old is None:
            lines.append(f"  {record['submission']} task {record['task']}: {now} (graded for the first time)")
        else:
            was = f"{old.get('status')} {old.get('points')}/{old.get('max_points')}"
            change = "unchanged" if was == now else f"was {was}"
            changed_file = " (new notebook)" if old.get("notebook_sha") != record.get("notebook_sha") else ""
            lines.append(f"  {record['submission']} task {record['task']}: {now} ({change}){changed_file}")
    return lines


def regrade(out_dir, paths=(), students=None, tasks=None, everyone=False, device=None, jobs=None,
            timeout=None, memory_mb=None, sandbox="auto", progress=True, runners=None):
    """Remove the selected records and grade again; returns (removed records, all records, regraded lines)."""
    run = read_run(out_dir)
    paths = graded_paths(run, paths, out_dir)
    wanted = selector(students, tasks, everyone)
    results = read_results(out_dir)
    check_selection(results, students, tasks)
    device = device or run.get("device") or "auto"
    if run.get("device") and device != run["device"]:
        print(f"note: {out_dir} was graded with --device {run['device']}; with --device {device} every record is "
              f"graded again", file=sys.stderr)

    removed = remove_records(out_dir, wanted, results)
    kept_keys = {_key(r) for _, r in results if r is not None and not wanted(r)}
    print(f"removed {len(removed)} record(s) from {os.path.join(out_dir, gradefolder.RESULTS)}"
          + (f": {_by_student(removed)}" if removed else ""))

    from grader.grading.engine import grade

    settings = regrade_settings(out_dir, run, device, jobs, timeout, memory_mb, sandbox, progress)
    records = grade(paths, settings, runners)
    lines = describe(removed, kept_keys, records)
    return removed, records, lines


def regrade_settings(out_dir, run, device=None, jobs=None, timeout=None, memory_mb=None, sandbox="auto",
                     progress=True):
    """The settings of a regrade: the options given, else those the folder was graded with."""
    from grader.grading.startup import Settings

    return Settings(out_dir=out_dir, device=device or run.get("device") or "auto", jobs=jobs or os.cpu_count() or 1,
                    timeout=timeout or run.get("timeout") or 60.0,
                    memory_mb=memory_mb or run.get("memory_mb") or 2048, seed=None, progress=progress,
                    sandbox=sandbox)


# ------------------------------------------------------------------------------------------
# Command line: python -m grader regrade ...
# ------------------------------------------------------------------------------------------

def add_parser(commands):
    p = commands.add_parser("regrade", help="grade some students or tasks of a graded folder again, keeping the rest")
    p.add_argument("dir", metavar="DIR", help="the folder that `grade --out` wrote")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="the submissions (default: the paths DIR was graded from, recorded in its run.json)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--student", nargs="+", action="extend", metavar="ID",
                       help="submission ids (as in grades.json) whose records are redone")
    which.add_argument("--task", nargs="+", action="extend", metavar="T",
                       help="task ids (2.4) whose records are redone for every student")
    which.add_argument("--everyone", action="store_true", help="redo every record (same seed)")
    p.add_argument("--device", default=None, choices=["auto", "cpu", "cuda"], help="default: the run's")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel workers")
    p.add_argument("--timeout", type=float, default=None, help="seconds per task (default: the run's)")
    p.add_argument("--memory-mb", type=int, default=None, help="memory per worker (default: the run's)")
    p.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "none"],
                   help="where student code runs (as for grade)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(args):
    # Checked before the worker hosts start: a typo must not cost their start.
    try:
        run = read_run(args.dir)
        graded_paths(run, args.paths, args.dir)
        check_selection(read_results(args.dir), args.student, args.task)
    except RegradeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from grader.grading import preflight, startup

    try:
        runners = startup.start(regrade_settings(args.dir, run, args.device, args.jobs, sandbox=args.sandbox))
    except preflight.PreflightError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        removed, records, lines = regrade(args.dir, args.paths, args.student, args.task, args.everyone,
                                          args.device, args.jobs, args.timeout, args.memory_mb, args.sandbox,
                                          not args.quiet, runners)
    except (RegradeError, preflight.PreflightError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        runners.close()
    print(f"regraded {len(lines)} task(s):")
    for line in lines:
        print(line)
    total = round(sum(r["points"] for r in records), 2)
    possible = sum(r["max_points"] for r in records)
    print(f"{len(records)} tasks of {len({r['submission'] for r in records})} submissions: {total}/{possible} "
          f"points; see {os.path.join(args.dir, 'grades.csv')}")
    isolation = read_run(args.dir).get("isolation")
    if isinstance(isolation, dict):
        print(f"isolation: {isolation.get('sandbox')} - {isolation.get('detail')}")
    return 0
