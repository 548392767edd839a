"""Grading a whole class of the whole course: `python -m grader grade` on N students x every chapter.

    python benchmarks/class_bench.py [--students 200] [--jobs 2] [--device cpu] [--seed 1234]
        [--nbgrader-slice 20] [--profile] [--workdir DIR] [--out-json PATH]
        [--cluster tcp://HOST:PORT | --local-cluster N]

1. Builds a synthetic class, one folder per student holding one notebook per chapter (01 to 09),
   as an instructor collects them: most students fully correct (the reference solutions), the
   others with one to three mistakes drawn from tests/corpus's wrong files, and a few broken
   notebooks (truncated JSON, an empty file, a task cell with a syntax error). Seeded.
2. Grades it in one fresh `python -m grader grade CLASS --jobs J --device D --seed S` process and
   prints the wall time, the time per student, per notebook and per task, when the first and the
   last result arrived (start-up, grading, final writes) and the peak memory of the grader's
   process tree, sampled from /proc every 0.2 s (RSS of the grader, of the largest process and
   the sum over the tree), with getrusage(RUSAGE_CHILDREN).ru_maxrss (the largest single process
   that ended) as a cross-check.
3. Grades the first --nbgrader-slice students that have no broken notebook under `nbgrader
   autograde` (every chapter; the course directory is set up as benchmarks/grade_bench.py does,
   with grader/nbgrading/course.py) and prints the ratio of the time per student; the course
   grader also grades that same slice alone, for a like-for-like ratio. 0 skips this part.
4. --profile: runs the grader under cProfile instead (the figures of 2 then include cProfile's
   overhead in the grading process), records each task's time in its worker host (the hosts'
   replies carry it), and runs one job per task (the reference solution) in a process of its
   own under cProfile, to split a job into course setup and earlier references, the student's
   cell, and the probes. Prints where the time goes, by phase and by module.

5. --cluster ADDRESS grades on the workers of that Dask cluster (`grade --cluster`) instead of the
   local pool; --local-cluster N first starts a cluster of N single-process workers on this machine
   (grader/cluster/local.py: a `dask scheduler` and N `dask worker`s) and stops it afterwards. The
   class and the seed are the same, so the two runs' wall times compare (docs/benchmarks.md).

It asserts nothing; every status is compared with what the class was built to get. Its parts,
one concern each, are in benchmarks/classbench/ (the class, a watched run, the profile, nbgrader).
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path[:0] = [os.path.join(REPO, "course"), REPO, os.path.join(REPO, "tests"), BENCH]

if __name__ == "__main__" and sys.argv[1:2] == ["--profiled-grader"]:  # internal: --profile's grading process
    from classbench.profiling import profiled_grader  # before torch and the course: the profile counts them

    sys.exit(profiled_grader(sys.argv[2], sys.argv[4:]))

from classbench.build_class import TASKS_PER_STUDENT, build_class, describe_class  # noqa: E402
from classbench.nbgrader_compare import nbgrader_part  # noqa: E402
from classbench.profiling import profiled_jobs, summarise_profile  # noqa: E402
from classbench.watch import check_statuses, grade, print_run  # noqa: E402
from grade_bench import machine  # noqa: E402
from grader.nbgrading import course as nbgrader_course  # noqa: E402


def run(args, work):
    figures = {"machine": machine(), "students": args.students, "jobs": args.jobs, "device": args.device,
               "seed": args.seed, "cluster": args.cluster}
    print("machine: {cpu}, {cores} cores, Python {python}, torch {torch}, nbgrader {nbgrader}, "
          "GPU: {gpu}".format(**figures["machine"]))
    class_dir = os.path.join(work, "class")
    start = time.perf_counter()
    plan, must_fail = build_class(class_dir, args.students, args.seed)
    figures["class"] = describe_class(plan)
    print(f"class: {figures['class']} (written in {time.perf_counter() - start:.1f} s)")
    total_tasks = args.students * TASKS_PER_STUDENT

    profile_path = os.path.join(work, "grader.prof") if args.profile else None
    out = os.path.join(work, "out_class")
    result = grade(class_dir, out, args, total_tasks, profile_path)
    under = " (under cProfile)" if args.profile else ""
    where = f"--cluster {args.cluster}" if args.cluster else f"--jobs {args.jobs}"
    print_run(f"\ncourse grader, {where} --device {args.device}{under}", result, args.students)
    figures["class_check"] = check_statuses(result["records"], plan, must_fail)
    print(f"   statuses {figures['class_check']['statuses']}; as the class was built: "
          f"{'yes' if figures['class_check']['as_planned'] else 'NO'}")
    for line in figures["class_check"]["surprises"]:
        print(f"     unexpected: {line}")
    figures["course_grader"] = {k: v for k, v in result.items() if k not in ("records", "log")}
    figures["course_grader"]["tasks"] = len(result["records"])

    if args.profile:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--profiled-jobs", os.path.join(work, "jobs.prof"),
                        "--seed", str(args.seed), "--device", args.device], cwd=REPO, check=True)
        figures["profile"] = summarise_profile(work, result["wall_s"])

    if args.nbgrader_slice:
        figures["nbgrader"] = nbgrader_part(args, work, plan, result)
    return figures


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=200, help="students in the class (default 200)")
    parser.add_argument("--jobs", type=int, default=2, help="the grader's workers (default 2)")
    parser.add_argument("--device", default="cpu", choices=["auto", "cpu", "cuda"], help="default cpu")
    parser.add_argument("--seed", type=int, default=1234, help="builds the class and seeds the hidden tests")
    parser.add_argument("--nbgrader-slice", type=int, default=20,
                        help="students graded by nbgrader too (default 20; 0: no nbgrader)")
    parser.add_argument("--profile", action="store_true", help="run the grader under cProfile and say where "
                                                               "the time goes")
    parser.add_argument("--workdir", help="keep the class and the outputs here (default: a temporary folder)")
    parser.add_argument("--out-json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--cluster", metavar="ADDRESS", help="grade on this Dask cluster's workers (grade --cluster)")
    parser.add_argument("--local-cluster", type=int, metavar="N", help="start a Dask cluster of N single-process "
                                                                        "workers on this machine and grade on it")
    parser.add_argument("--profiled-jobs", metavar="PATH", help=argparse.SUPPRESS)  # internal, for --profile
    args = parser.parse_args(argv)
    os.environ["PYTHONPATH"] = nbgrader_course.grading_env()["PYTHONPATH"]
    if args.profiled_jobs:
        return profiled_jobs(args.profiled_jobs, args.seed, args.device)

    with contextlib.ExitStack() as stack:
        if args.local_cluster:
            from grader.cluster.local import LocalCluster

            args.cluster = stack.enter_context(LocalCluster(args.local_cluster)).address
            print(f"a local Dask cluster of {args.local_cluster} workers at {args.cluster}")
        if args.workdir:
            os.makedirs(args.workdir, exist_ok=True)
            figures = run(args, os.path.abspath(args.workdir))
        else:
            figures = run(args, stack.enter_context(tempfile.TemporaryDirectory(prefix="class_bench_")))
    figures["command"] = " ".join(["python", "benchmarks/class_bench.py", *argv])
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump(figures, f, indent=1, default=str)
        print(f"figures written to {args.out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
