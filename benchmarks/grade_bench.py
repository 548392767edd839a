"""How long grading takes: the course grader (`python -m grader grade`) against nbgrader.

    python benchmarks/grade_bench.py [--batch 20] [--jobs 2] [--out-json bench.json]

Measures, on this machine, in one run:
  1. one submission (a student folder with both chapter notebooks, all correct), graded by
     the course grader's command line in a fresh process, as an instructor runs it;
  2. a batch of --batch such submissions (half correct, half with one mistake from
     tests/corpus), graded by the course grader with --jobs workers;
  3. the same batch under `nbgrader autograde` (both chapters), which runs every notebook
     top to bottom in its own kernel.
It prints the figures (and the ratio nbgrader / course grader for the batch); it asserts
nothing. Both graders use the same seed and device, so they test with the same cases and
their total points should agree (printed as a cross-check).
"""
import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO, os.path.join(REPO, "tests")]

import torch  # noqa: E402

from factory import corpus_items, filled_notebook, records_by_submission, run_grader  # noqa: E402
from gptcourse.checking.tasks import CHAPTERS  # noqa: E402
from grader.nbgrading import course as nbgrader_course  # noqa: E402


def machine():
    """What the figures were measured on."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import nbgrader

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "nbgrader": nbgrader.__version__,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }


# ------------------------------------------------------------------------------------------
# Submissions
# ------------------------------------------------------------------------------------------

def batch_notebooks(size):
    """{student: {chapter: notebook}}: every other student is correct, the others each carry
    one wrong corpus implementation (spread over all tasks) and are correct elsewhere."""
    wrong = [item for item in corpus_items() if item.expect == "wrong"]
    students = {}
    for k in range(size):
        overrides, label = {}, "correct"
        if k % 2 == 1:
            item = wrong[(k // 2 * 17) % len(wrong)]  # a stride, so that mistakes vary by task
            overrides, label = {item.task: item.source}, item.id
        students[f"student_{k:03d}_{label.replace('.', '_')}"] = {
            chapter: filled_notebook(chapter, overrides) for chapter in CHAPTERS}
    return students


def write_single_submission(folder):
    """One student folder with both chapter notebooks, all correct."""
    for chapter in CHAPTERS:
        path = os.path.join(folder, "student_000", f"{chapter}.ipynb")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(filled_notebook(chapter), f, indent=1)
    return folder


# ------------------------------------------------------------------------------------------
# Timed runs
# ------------------------------------------------------------------------------------------

def course_grader(paths, out_dir, jobs, seed, device):
    """(seconds, records): one fresh `python -m grader grade` process, start to finish.

    Each run gets a new output folder: the grader resumes from results.jsonl, so reusing a
    folder would time a run that has nothing left to do.
    """
    start = time.perf_counter()
    records = run_grader(paths, out_dir, "--jobs", str(jobs), "--seed", str(seed), "--device", device)
    return time.perf_counter() - start, records


def nbgrader_autograde(course_dir, seed, device):
    """(seconds, scores): `nbgrader autograde` of every chapter, one after the other."""
    start = time.perf_counter()
    for chapter in CHAPTERS:
        nbgrader_course.autograde(course_dir, chapter, seed=seed, device=device)
    return time.perf_counter() - start, nbgrader_course.scores(course_dir)


def total_points(records):
    return sum(r["points"] for r in records)


# ------------------------------------------------------------------------------------------

def run(args, work):
    figures = {"machine": machine(), "device": args.device, "batch": args.batch, "jobs": args.jobs,
               "seed": args.seed}
    print("machine: {cpu}, {cores} cores, Python {python}, torch {torch}, nbgrader {nbgrader}, "
          "GPU: {gpu}".format(**figures["machine"]))
    print(f"grading device: {args.device}; seed {args.seed}\n")

    # 1. One submission, several times: a single run is noisy on a shared machine.
    single = write_single_submission(os.path.join(work, "single"))
    times = []
    for repeat in range(args.repeat):
        seconds, records = course_grader([single], os.path.join(work, f"out_single_{repeat}"),
                                         args.jobs, args.seed, args.device)
        times.append(seconds)
    figures["single_s"] = {"median": statistics.median(times), "min": min(times), "runs": times,
                           "tasks": len(records), "points": f"{total_points(records)}/"
                                                             f"{sum(r['max_points'] for r in records)}"}
    print(f"1. one submission (both chapters, {len(records)} tasks), course grader CLI: "
          f"median {statistics.median(times):.1f} s, best {min(times):.1f} s over {args.repeat} runs "
          f"({figures['single_s']['points']} points)")

    # 2. and 3. The same batch, in an nbgrader course directory that both graders read.
    course_dir = os.path.join(work, "nbgrader_course")
    start = time.perf_counter()
    nbgrader_course.make_course(course_dir)
    figures["nbgrader_setup_s"] = time.perf_counter() - start
    for student, notebooks in batch_notebooks(args.batch).items():
        for chapter, notebook in notebooks.items():
            nbgrader_course.add_submission(course_dir, student, chapter, notebook)

    batch_s, records = course_grader([course_dir], os.path.join(work, "out_batch"), args.jobs, args.seed,
                                     args.device)
    figures["course_grader_batch_s"] = batch_s
    print(f"2. {args.batch} submissions ({len(records)} tasks), course grader --jobs {args.jobs}: "
          f"{batch_s:.1f} s ({batch_s / args.batch:.2f} s per submission)")

    nbgrader_s, scores = nbgrader_autograde(course_dir, args.seed, args.device)
    figures["nbgrader_batch_s"] = nbgrader_s
    print(f"3. the same {args.batch} submissions, nbgrader autograde (both chapters): {nbgrader_s:.1f} s "
          f"({nbgrader_s / args.batch:.2f} s per submission; not counted: generate_assignment "
          f"{figures['nbgrader_setup_s']:.1f} s)")

    figures["ratio_nbgrader_over_course_grader"] = nbgrader_s / batch_s
    print(f"\nbatch ratio nbgrader / course grader: {nbgrader_s / batch_s:.1f}x")

    # Cross-check, not a test (tests/notebooks/test_nbgrader_agreement.py is): same cases, same points?
    by_submission = records_by_submission(records)
    differ = [f"{student} {task}: nbgrader {score:g}, course grader {by_submission[student][task]['points']}"
              for (student, task), (score, _) in sorted(scores.items())
              if score != by_submission[student][task]["points"]]
    same = not differ
    figures["points"] = {"course_grader": total_points(records), "nbgrader": sum(s for s, _ in scores.values()),
                         "agree_per_task": same, "differ": differ}
    print(f"points: course grader {figures['points']['course_grader']}, nbgrader "
          f"{figures['points']['nbgrader']:g}; every task agrees: {'yes' if same else 'NO'}")
    for line in differ:
        print(f"  differs: {line}")
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=20, help="submissions in the batch (default 20)")
    parser.add_argument("--jobs", type=int, default=2, help="course grader workers (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the single-submission timing (default 3)")
    parser.add_argument("--seed", type=int, default=1234, help="hidden test seed of both graders")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                        help="the graders' device option (default auto: the CPU, plus CUDA if present)")
    parser.add_argument("--out-json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--workdir", help="keep the submissions and outputs here (default: a temporary folder)")
    args = parser.parse_args(argv)

    # The graders' own processes (and nbgrader's kernels) import gptcourse and grader from
    # this checkout, wherever the benchmark is started from.
    os.environ["PYTHONPATH"] = nbgrader_course.grading_env()["PYTHONPATH"]

    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        figures = run(args, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="grade_bench_") as work:
            figures = run(args, work)
    figures["command"] = " ".join(["python", "benchmarks/grade_bench.py", *(argv or sys.argv[1:])])
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump(figures, f, indent=1)
        print(f"figures written to {args.out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
