"""The similarity report of a whole class: `python -m grader similarity` on N students x every chapter.

    python benchmarks/similarity_bench.py [--students 200] [--jobs 2] [--copies 10]
        [--corpus-share 0.05] [--seed 1234] [--workdir DIR] [--out-json PATH]

1. Builds a synthetic class, one folder per student holding one notebook per chapter (01 to 09,
   40 task cells): every cell is the book's answer (the reference) in the student's own variable
   names and layout (tests/factory.py: disguised), so that no two cells are the same text; with
   probability --corpus-share per task a student wrote one of the corpus's cells for it instead
   (tests/corpus/, correct or wrong; disguised too). --copies pairs of students share a cell of a
   task of ten statements or more: one wrote one of the corpus's correct cells, the other copied it
   and disguised it again. Seeded.
2. Writes the grade folder that grading this class would leave (run.json, grades.json, every task
   passed, the records made by grader.grading.gradefolder): the similarity report reads nothing else, and
   grading the class is a benchmark of its own (benchmarks/class_bench.py).
3. Runs `python -m grader similarity DIR --jobs J` in one fresh process and prints its wall time,
   its CPU time, how busy the machine was just before (load average), how many pairs it flagged
   and how many of the planted copies are among them.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path[:0] = [os.path.join(REPO, "course"), REPO, os.path.join(REPO, "tests")]

from factory import corpus_items, disguised, filled_notebook, manifest, statements, write_notebook  # noqa: E402
from gptcourse.checking.tasks import CHAPTERS, get_task, tasks_of  # noqa: E402
from grader.grading import gradefolder  # noqa: E402

LONG_TASK_STATEMENTS = 10


def in_own_names(source, student):
    """The cell as this student would have written it; a cell that does not parse stays as it is."""
    try:
        return disguised(source, prefix=f"{student}_v")
    except SyntaxError:
        return source


def plan_class(students, seed, corpus_share, copies):
    """({student: {task: source}}, [(first, second, task)] planted copies)."""
    rng = random.Random(seed)
    reference = {tid: t["source"] for chapter in manifest().values() for tid, t in chapter["tasks"].items()}
    corpus, correct = {}, {}
    for item in corpus_items():
        corpus.setdefault(item.task, []).append(item.source)
        if item.expect == "correct":
            correct.setdefault(item.task, []).append(item.source)
    names = [f"student_{k:03d}" for k in range(students)]
    cells = {name: {task: (rng.choice(corpus[task]) if rng.random() < corpus_share and task in corpus else source)
                    for task, source in reference.items()} for name in names}
    long_tasks = sorted(t for t in correct if statements(reference[t]) >= LONG_TASK_STATEMENTS)
    planted = []
    sharing = rng.sample(names, 2 * copies)
    for first, second in zip(sharing[::2], sharing[1::2]):
        task = rng.choice(long_tasks)
        cells[first][task] = cells[second][task] = rng.choice(correct[task])
        planted.append((min(first, second), max(first, second), task))
    return cells, planted


def write_class(folder, cells):
    """folder/<student>/<chapter>.ipynb, each task cell in the student's own names."""
    for student, sources in cells.items():
        for chapter in CHAPTERS:
            overrides = {t.id: in_own_names(sources[t.id], student) for t in tasks_of(chapter)}
            write_notebook(filled_notebook(chapter, overrides), os.path.join(folder, student, f"{chapter}.ipynb"))


def write_grade_folder(out, class_dir, seed):
    """run.json and grades.json as a grade run of the class would write them (its students' notebooks of
    every chapter they have), every task passed."""
    import hashlib

    os.makedirs(out, exist_ok=True)
    run = {"seed": seed, "device": "cpu", "paths": [os.path.abspath(class_dir)]}
    points = {tid: t["points"] for chapter in manifest().values() for tid, t in chapter["tasks"].items()}
    records = []
    for student in sorted(os.listdir(class_dir)):
        for chapter in CHAPTERS:
            path = os.path.join(class_dir, student, f"{chapter}.ipynb")
            if not os.path.exists(path):
                continue
            with open(path, "rb") as f:
                sha = hashlib.sha256(f.read()).hexdigest()
            for task in tasks_of(chapter):
                record = gradefolder.new_record(student, f"{chapter}.ipynb", sha, get_task(task.id), points[task.id],
                                                run)
                records.append(gradefolder.finished(record, "passed", "All hidden test cases passed."))
    gradefolder.write_atomically(os.path.join(out, gradefolder.RUN), json.dumps(run, indent=1))
    gradefolder.write_atomically(os.path.join(out, gradefolder.GRADES_JSON), json.dumps(records))
    return len(records)


def run_similarity(out, jobs):
    """One `python -m grader similarity` process: (wall seconds, CPU seconds, its output)."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "course"), REPO])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "grader", "similarity", out, "--jobs", str(jobs)], cwd=REPO,
                            env=environment, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"python -m grader similarity failed:\n{result.stdout}\n{result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result.stdout.strip()


def findings(out, planted):
    """What the report says: pairs flagged, tasks with pairs, and which planted copies are among them."""
    with open(os.path.join(out, gradefolder.SIMILARITY), encoding="utf-8") as f:
        data = json.load(f)
    flagged = {(min(p["first"], p["second"]), max(p["first"], p["second"]), t["task"])
               for t in data["tasks"] for p in t["pairs"]}
    found = [copy for copy in planted if copy in flagged]
    return {"pairs": len(flagged), "tasks_with_pairs": len({task for _, _, task in flagged}),
            "planted": len(planted), "planted_found": len(found),
            "planted_missed": [list(copy) for copy in planted if copy not in flagged]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=200, help="students in the class (default 200)")
    parser.add_argument("--jobs", type=int, default=2, help="the command's processes (default 2)")
    parser.add_argument("--copies", type=int, default=10, help="pairs of students who share a cell (default 10)")
    parser.add_argument("--corpus-share", type=float, default=0.05,
                        help="chance that a student's cell is one of the corpus's, not the book's (default 0.05)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--workdir", help="keep the class and the grade folder here (default: a temporary folder)")
    parser.add_argument("--out-json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="similarity-bench-") as temporary:
        work = args.workdir or temporary
        class_dir, out = os.path.join(work, "class"), os.path.join(work, "out")
        start = time.perf_counter()
        cells, planted = plan_class(args.students, args.seed, args.corpus_share, args.copies)
        write_class(class_dir, cells)
        records = write_grade_folder(out, class_dir, args.seed)
        print(f"class: {args.students} students x {len(CHAPTERS)} chapters, {records} task cells, {len(planted)} "
              f"planted copies (written in {time.perf_counter() - start:.1f} s)")
        load = os.getloadavg()[0]
        wall, cpu, printed = run_similarity(out, args.jobs)
        figures = {"students": args.students, "chapters": len(CHAPTERS), "cells": records, "jobs": args.jobs,
                   "cores": os.cpu_count(), "load_before": round(load, 2), "wall_s": round(wall, 1),
                   "cpu_s": round(cpu, 1), **findings(out, planted)}
    print(f"python -m grader similarity --jobs {args.jobs}: {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"(load average {load:.2f} before, {os.cpu_count()} cores)")
    print(f"   {printed}")
    print(f"   {figures['pairs']} pairs flagged in {figures['tasks_with_pairs']} tasks; planted copies found: "
          f"{figures['planted_found']} of {figures['planted']}")
    for missed in figures["planted_missed"]:
        print(f"     missed: {missed}")
    if args.out_json:
        with open(args.out_json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1)
    return figures


if __name__ == "__main__":
    main()
