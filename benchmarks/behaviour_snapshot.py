"""Record what the course's checking says about a fixed set of code, and compare two records.

    python benchmarks/behaviour_snapshot.py record FILE [--parts corpus class selfcheck] [--students 20]
                                                        [--cluster tcp://HOST:PORT]
    python benchmarks/behaviour_snapshot.py compare BEFORE AFTER [--again BEFORE2] [--new-field KEY]

For changes that must leave behaviour alone (a refactoring, say): record before the first
step, record again after the last, compare. Three parts:

- corpus     every item of tests/corpus graded by `python -m grader grade` in one batch, as
             tests/grader/test_corpus.py builds them (the first wrong and correct item of each
             task with its whole chapter, the others alone), seed 4242, CPU: the grader's
             grades.json and every record of results.jsonl;
- class      benchmarks/class_bench.py's class of --students students (seed 1234: correct
             students, students with corpus mistakes, broken notebooks), graded the same way;
- selfcheck  the public self-check (gptcourse.check) on every corpus item, loaded as the
             self-check tests load it: "passed", or the message it failed with.

--cluster grades the corpus and the class on the workers of that Dask cluster (`grade --cluster`):
a record made so compares with one of the local pool (a cluster must give the same grades as one machine).

Timings are taken out of what is recorded; everything else must be identical, byte for byte
once written with sorted keys: grades, points, statuses, messages, error types. Some messages
differ between two runs of the same code, because the code they describe is not deterministic
(an unseeded shuffle, the order of a set of strings, a scratch folder's random name): record
the state before twice and give the second record as --again; a message that differs between
those two is compared by its status and points only, every other value exactly. `compare`
prints the first differences of each part (and how many values were volatile) and exits with
status 1 when there are any. It asserts nothing else: it is not a test. A record takes about
four minutes on two cores (the corpus batch, a class of 20 and about 700 self-checks).

    python benchmarks/behaviour_snapshot.py record before.json
    python benchmarks/behaviour_snapshot.py record before-again.json
    ... the change ...
    python benchmarks/behaviour_snapshot.py record after.json
    python benchmarks/behaviour_snapshot.py compare before.json after.json --again before-again.json
"""
import argparse
import contextlib
import io
import json
import os
import re
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tests/ holds the helpers (factory.py), tests/grader the corpus test whose notebooks it grades.
sys.path[:0] = [os.path.join(REPO, "tests"), os.path.join(REPO, "tests", "grader"), os.path.join(REPO, "course"), REPO]

PARTS = ("corpus", "class", "selfcheck")
# Keys whose values change from run to run: times, and where the output folder happened to be.
VOLATILE_KEYS = {"seconds", "elapsed", "elapsed_s", "wall_s", "started", "finished", "duration", "time",
                 "timestamp", "created", "host_seconds", "out", "path", "graded_at"}


def without_volatile(value):
    """A copy of a JSON value without the keys that differ from run to run."""
    if isinstance(value, dict):
        return {key: without_volatile(item) for key, item in value.items()
                if key not in VOLATILE_KEYS and not key.endswith(("_seconds", "_s", "_at"))}
    if isinstance(value, list):
        return [without_volatile(item) for item in value]
    return value


def graded_folder(out):
    """What the grader wrote to `out` that says how the code was graded."""
    with open(os.path.join(out, "grades.json"), encoding="utf-8") as file:
        grades = json.load(file)
    with open(os.path.join(out, "results.jsonl"), encoding="utf-8") as file:
        results = [json.loads(line) for line in file if line.strip()]
    results.sort(key=lambda record: (str(record.get("submission")), str(record.get("task"))))
    return {"grades.json": without_volatile(grades), "results.jsonl": without_volatile(results)}


def record_corpus(workdir, cluster=None):
    from pathlib import Path

    from factory import corpus_items, filled_notebook, run_grader, write_notebook
    from test_corpus import SEED, WHOLE_CHAPTER, only_task_notebook

    root = Path(workdir) / "corpus"
    for item in corpus_items():
        notebook = filled_notebook(item.chapter, {item.task: item.source})
        if item.id not in WHOLE_CHAPTER:
            notebook = only_task_notebook(notebook, item.task)
        write_notebook(notebook, root / "submissions" / item.id / f"{item.chapter}.ipynb")
    run_grader([root / "submissions"], root / "out", "--jobs", "2", "--seed", SEED, "--device", "cpu",
               *(["--cluster", cluster] if cluster else []))
    return graded_folder(root / "out")


def record_class(workdir, students, cluster=None):
    import subprocess

    folder = os.path.join(workdir, "class")
    subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "class_bench.py"), "--students", str(students),
                    "--jobs", "2", "--nbgrader-slice", "0", "--workdir", folder,
                    *(["--cluster", cluster] if cluster else [])], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)
    outs = [os.path.join(folder, name) for name in sorted(os.listdir(folder))
            if os.path.isfile(os.path.join(folder, name, "grades.json"))]
    if len(outs) != 1:
        raise SystemExit(f"expected one graded folder under {folder}, found {outs}")
    return graded_folder(outs[0])


def record_selfchecks():
    from factory import corpus_items, load
    from gptcourse import SelfCheckFailed, check

    import torch

    outcomes = {}
    for item in corpus_items():
        # As in a fresh kernel: code that draws unseeded random numbers (dropout left on in eval
        # mode) draws the same ones whatever the items before it drew.
        torch.manual_seed(0)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                check(item.task, *load(item.source, item.task))
            outcome = "passed"
        except SelfCheckFailed as failure:
            outcome = f"failed: {failure}"
        except Exception as error:  # noqa: BLE001 - the code under test may raise anything
            outcome = f"error: {type(error).__name__}: {error}"
        outcomes[f"{item.task} {item.id}"] = outcome
    return outcomes


def record(path, parts, students, cluster=None):
    os.environ.setdefault("GPTCOURSE_DATA_MIRROR", os.path.join(REPO, "..", "shared", "data"))
    snapshot = {}
    with tempfile.TemporaryDirectory(prefix="snapshot-") as workdir:
        if "corpus" in parts:
            snapshot["corpus"] = record_corpus(workdir, cluster)
            print(f"corpus: {len(snapshot['corpus']['results.jsonl'])} records", flush=True)
        if "class" in parts:
            snapshot["class"] = record_class(workdir, students, cluster)
            print(f"class: {len(snapshot['class']['results.jsonl'])} records", flush=True)
        if "selfcheck" in parts:
            snapshot["selfcheck"] = record_selfchecks()
            print(f"selfcheck: {len(snapshot['selfcheck'])} items", flush=True)
    with open(path, "w", encoding="utf-8") as file:
        json.dump(snapshot, file, sort_keys=True, indent=1)
    print(f"written: {path}")


def flattened(value, where=""):
    """{path: leaf value} of a JSON value; a path is like /grades.json[3]/feedback."""
    if isinstance(value, dict):
        return {path: leaf for key, item in value.items() for path, leaf in flattened(item, f"{where}/{key}").items()}
    if isinstance(value, list):
        flat = {f"{where}#length": len(value)}
        for index, item in enumerate(value):
            flat.update(flattened(item, f"{where}[{index}]"))
        return flat
    return {where: value}


def outcome_word(value):
    """What stays of a volatile value: a self-check's outcome word ("passed", "failed", "error")."""
    return value.split(":")[0] if isinstance(value, str) else value


def compare(before_path, after_path, again_path=None, shown=10, new_fields=()):
    def load(path):
        with open(path, encoding="utf-8") as file:
            return json.load(file)

    before, after = load(before_path), load(after_path)
    again = load(again_path) if again_path else None
    same = True
    for part in sorted(set(before) | set(after)):
        if part not in before or part not in after:
            print(f"{part}: recorded only {'before' if part in before else 'after'}")
            same = False
            continue
        old, new = flattened(before[part]), flattened(after[part])
        volatile = set()
        if again is not None and part in again:
            repeat = flattened(again[part])
            volatile = {path for path in old if repeat.get(path) != old[path]}
        differ, added = [], 0
        for path in sorted(set(old) | set(new)):
            if path not in old and any(re.search(rf"/{re.escape(name)}(/|#|$)", path) for name in new_fields):
                added += 1  # a field the change adds on purpose: reported, not compared
                continue
            if path in volatile and path.endswith("/feedback"):
                continue  # its record's status and points are compared exactly
            if path in volatile:
                if outcome_word(old.get(path)) != outcome_word(new.get(path)):
                    differ.append(path)
            elif old.get(path) != new.get(path):
                differ.append(path)
        print(f"{part}: {'identical' if not differ else f'{len(differ)} DIFFERENT'} "
              f"({len(old)} values, {len(volatile)} volatile between the two records before"
              + (f"; {added} values of the new fields {', '.join(new_fields)} left out" if new_fields else "") + ")")
        for path in differ[:shown]:
            print(f"  {path}: {json.dumps(old.get(path))[:300]} -> {json.dumps(new.get(path))[:300]}")
        same &= not differ
    return 0 if same else 1


def with_fixed_hashes():
    """Run again with PYTHONHASHSEED=0 unless it is set so: the order of a set of strings (code
    that sorts only by length, say) then does not change from record to record. The grader's
    processes inherit it."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record")
    rec.add_argument("file")
    rec.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    rec.add_argument("--students", type=int, default=20)
    rec.add_argument("--cluster", metavar="ADDRESS", help="grade on this Dask cluster's workers")
    cmp_ = commands.add_parser("compare")
    cmp_.add_argument("before")
    cmp_.add_argument("after")
    cmp_.add_argument("--again", help="a second record of the state before: what differs between the two is volatile")
    cmp_.add_argument("--new-field", dest="new_fields", action="append", default=[], metavar="KEY",
                      help="a key the change adds to records on purpose (as 'finding' once was): values "
                           "under it that only AFTER has are counted, not compared; repeatable")
    args = parser.parse_args(argv)
    if args.command == "record":
        with_fixed_hashes()
        record(args.file, args.parts, args.students, args.cluster)
        return 0
    return compare(args.before, args.after, args.again, new_fields=args.new_fields)


if __name__ == "__main__":
    sys.exit(main())
