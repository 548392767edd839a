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
   with grader/nbgrader_course.py) and prints the ratio of the time per student; the course
   grader also grades that same slice alone, for a like-for-like ratio. 0 skips this part.
4. --profile: runs the grader under cProfile instead (the figures of 2 then include cProfile's
   overhead in the grading process), records each task's time in its worker host (the hosts'
   replies carry it), and runs one job per task (the reference solution) in a process of its
   own under cProfile, to split a job into course setup and earlier references, the student's
   cell, and the probes. Prints where the time goes, by phase and by module.

5. --cluster ADDRESS grades on the workers of that Dask cluster (`grade --cluster`) instead of the
   local pool; --local-cluster N first starts a cluster of N single-process workers on this machine
   (grader/local_cluster.py: a `dask scheduler` and N `dask worker`s) and stops it afterwards. The
   class and the seed are the same, so the two runs' wall times compare (docs/benchmarks.md).

It asserts nothing; every status is compared with what the class was built to get.
"""
import argparse
import collections
import contextlib
import cProfile
import json
import os
import pstats
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path[:0] = [os.path.join(REPO, "course"), REPO, os.path.join(REPO, "tests"), BENCH]


def profiled_grader(profile_path, grader_args):
    """Run `python -m grader ...` in this process under cProfile; also keep each task's time in its
    worker host (the `seconds` of the host's reply, fork to reaping). Defined and dispatched
    before this script imports torch and the course, which the grader must import itself."""
    profiler = cProfile.Profile()
    profiler.enable()  # before the grader's imports: they are part of its start-up
    from grader import pool

    host_seconds = []
    handle = pool.WorkerPool._handle

    def recording_handle(self, host, reply):
        job = host.job
        finished = handle(self, host, reply)
        if finished is not None and isinstance(job, dict) and isinstance(reply, dict):
            host_seconds.append((job.get("task"), reply.get("seconds")))
        return finished

    pool.WorkerPool._handle = recording_handle
    try:
        from grader.__main__ import main

        code = main(grader_args)
    finally:
        profiler.disable()
        profiler.dump_stats(profile_path)
        with open(profile_path + ".hosts.json", "w") as f:
            json.dump(host_seconds, f)
    return code


if __name__ == "__main__" and sys.argv[1:2] == ["--profiled-grader"]:  # internal: --profile's grading process
    sys.exit(profiled_grader(sys.argv[2], sys.argv[4:]))

from factory import corpus_items, filled_notebook  # noqa: E402
from gptcourse.checking.tasks import CHAPTERS, TASKS, tasks_of  # noqa: E402
from gptcourse.checking.worker_host import _process_table, descendants, rss_mb  # noqa: E402
from grade_bench import machine  # noqa: E402
from grader import nbgrader_course  # noqa: E402

TASKS_PER_STUDENT = sum(len(tasks_of(chapter)) for chapter in CHAPTERS)


# ------------------------------------------------------------------------------------------
# The class
# ------------------------------------------------------------------------------------------

def syntax_error_in(source):
    """The cell with its first `def` or `class` line missing its colon (a typo students make)."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("def ", "class ")) and line.rstrip().endswith(":"):
            lines[i] = line.rstrip()[:-1]
            return "\n".join(lines) + "\n"
    return source + "\nif True\n    pass\n"


def build_class(folder, students, seed, correct_share=0.6):
    """Write the class under folder/<student>/<chapter>.ipynb; returns its plan:
    {student: {"mistakes": [corpus ids], "broken": (kind, chapter, task or None) or None}} and
    the (student, task) pairs that must not pass."""
    rng = random.Random(seed)
    wrong = [item for item in corpus_items() if item.expect == "wrong"]
    correct_text = {chapter: json.dumps(filled_notebook(chapter), indent=1) for chapter in CHAPTERS}
    names = [f"student_{k:03d}" for k in range(students)]
    per_kind = max(1, round(students * 0.02)) if students >= 3 else 0
    broken_students = rng.sample(names, 3 * per_kind)
    broken = {name: kind for name, kind in zip(broken_students, [k for k in ("truncated", "empty", "syntax")
                                                                   for _ in range(per_kind)])}
    plan, must_fail = {}, set()
    for name in names:
        mistakes = []
        if rng.random() >= correct_share:
            by_task = {}
            for item in rng.sample(wrong, rng.choice([1, 1, 1, 2, 2, 3])):
                by_task.setdefault(item.task, item)  # one mistake per task
            mistakes = sorted(by_task.values(), key=lambda item: item.id)
        overrides = {item.task: item.source for item in mistakes}
        must_fail |= {(name, item.task) for item in mistakes}
        damage = None
        if name in broken:
            chapter = rng.choice(CHAPTERS)
            task = rng.choice(tasks_of(chapter)).id if broken[name] == "syntax" else None
            damage = (broken[name], chapter, task)
            if task:
                overrides[task] = syntax_error_in(overrides.get(task) or _reference_source(task))
                must_fail.add((name, task))
            else:
                must_fail |= {(name, t.id) for t in tasks_of(chapter)}
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        for chapter in CHAPTERS:
            # With overrides, later chapters' carry-over cells hold the student's own earlier code too.
            text = json.dumps(filled_notebook(chapter, overrides), indent=1) if overrides else correct_text[chapter]
            if damage and damage[1] == chapter and damage[0] == "truncated":
                text = text[: len(text) // 2]
            elif damage and damage[1] == chapter and damage[0] == "empty":
                text = ""
            with open(os.path.join(folder, name, f"{chapter}.ipynb"), "w", encoding="utf-8") as f:
                f.write(text)
        plan[name] = {"mistakes": [item.id for item in mistakes], "broken": damage}
    return plan, must_fail


_SOURCES = {}


def _reference_source(task_id):
    if not _SOURCES:
        with open(os.path.join(REPO, "grader", "reference", "manifest.json"), encoding="utf-8") as f:
            _SOURCES.update({tid: t["source"] for m in json.load(f).values() for tid, t in m["tasks"].items()})
    return _SOURCES[task_id]


def describe_class(plan):
    with_mistakes = [p for p in plan.values() if p["mistakes"]]
    kinds = collections.Counter(p["broken"][0] for p in plan.values() if p["broken"])
    correct = sum(1 for p in plan.values() if not p["mistakes"] and not p["broken"])
    return {"students": len(plan), "fully_correct": correct, "with_mistakes": len(with_mistakes),
            "mistakes": sum(len(p["mistakes"]) for p in with_mistakes), "broken_notebooks": dict(kinds)}


# ------------------------------------------------------------------------------------------
# One grader run, watched
# ------------------------------------------------------------------------------------------

class Watcher(threading.Thread):
    """Samples the process tree under `pid` every `interval` s: RSS peaks, and when results.jsonl
    got its first record from a worker (passed, failed or timeout: the errors of unreadable
    notebooks are written before any worker starts) and its `total`-th record."""

    def __init__(self, pid, results_path, total, start, interval=0.2):
        super().__init__(daemon=True)
        self.pid, self.results_path, self.total = pid, results_path, total
        self.start_time, self.interval = start, interval
        self.peak = {"grader_rss_mb": 0.0, "largest_process_rss_mb": 0.0, "tree_rss_mb": 0.0, "processes": 0}
        self.first_result_s = self.all_results_s = None
        self._lines, self._offset, self._inode = 0, 0, None
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            self.sample()
            self.stopped.wait(self.interval)

    def sample(self):
        tree = [self.pid] + descendants(self.pid, _process_table())
        sizes = [rss_mb(pid) for pid in tree]
        peak = self.peak
        peak["grader_rss_mb"] = max(peak["grader_rss_mb"], sizes[0])
        peak["largest_process_rss_mb"] = max(peak["largest_process_rss_mb"], max(sizes))
        peak["tree_rss_mb"] = max(peak["tree_rss_mb"], sum(sizes))
        peak["processes"] = max(peak["processes"], len(tree))
        self._count_results()

    def _count_results(self):
        """New lines since the last sample (the file only grows until the final rewrite)."""
        if self.all_results_s is not None:
            return
        try:
            with open(self.results_path, "rb") as f:
                inode = os.fstat(f.fileno()).st_ino
                if self._inode not in (None, inode):  # rewritten at the end: every result is in
                    self.all_results_s = time.perf_counter() - self.start_time
                    return
                self._inode = inode
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return
        chunk = chunk[: chunk.rfind(b"\n") + 1]  # whole lines only
        self._offset += len(chunk)
        self._lines += chunk.count(b"\n")
        now = time.perf_counter() - self.start_time
        if self.first_result_s is None and any(b'"status": "error"' not in line for line in chunk.splitlines()):
            self.first_result_s = now
        if self._lines >= self.total:
            self.all_results_s = now


def busy_cpu_seconds():
    """CPU seconds the whole machine has spent busy since boot (/proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (sum(fields[:8]) - fields[3] - fields[4]) / ticks  # all but idle and iowait (guest is in user)


def busy_share(seconds=2.0):
    """The share of all cores the machine spent busy over the next `seconds` (None if unknown)."""
    before = busy_cpu_seconds()
    time.sleep(seconds)
    after = busy_cpu_seconds()
    return None if before is None or after is None else (after - before) / seconds / (os.cpu_count() or 1)


def grade(class_dir, out_dir, args, total_tasks, profile_path=None):
    """One fresh grader process, start to finish; returns its figures."""
    grader_args = ["grade", class_dir, "--out", out_dir, "--quiet", "--jobs", str(args.jobs),
                   "--device", args.device, "--seed", str(args.seed)]
    if getattr(args, "cluster", None):
        grader_args += ["--cluster", args.cluster]
    if profile_path:
        command = [sys.executable, os.path.abspath(__file__), "--profiled-grader", profile_path, "--", *grader_args]
    else:
        command = [sys.executable, "-m", "grader", *grader_args]
    log_path = out_dir.rstrip("/") + ".log"
    with open(log_path, "w") as log:
        # Processes in the sandbox's pid namespace are not all reaped into our RUSAGE_CHILDREN, so
        # the grader's own CPU cannot be told apart: the machine's busy share just before the run
        # says whether anything else was running (then the figures are not a quiet machine's).
        before_share = busy_share()
        machine_before = busy_cpu_seconds()
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        watcher = Watcher(process.pid, os.path.join(out_dir, "results.jsonl"), total_tasks, start)
        watcher.start()
        code = process.wait()
        wall = time.perf_counter() - start
        machine_after = busy_cpu_seconds()
        watcher.stopped.set()
        watcher.join()
    if code != 0:
        with open(log_path) as f:
            raise SystemExit(f"the grader failed (exit {code}):\n{f.read()[-5000:]}")
    with open(os.path.join(out_dir, "grades.json"), encoding="utf-8") as f:
        records = json.load(f)
    cpu = {"busy_before_share": before_share}
    if machine_before is not None and machine_after is not None:
        cpu["busy_during_share"] = (machine_after - machine_before) / wall / (os.cpu_count() or 1)
    largest_child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"wall_s": wall, "cpu": cpu, "first_result_s": watcher.first_result_s,
            "all_results_s": watcher.all_results_s, "memory": dict(watcher.peak),
            "ru_maxrss_children_mb": largest_child_mb,
            "records": records, "log": log_path}


def check_statuses(records, plan, must_fail):
    """Did every task get what the class was built to get? (passed, unless planned to fail)"""
    status = {(r["submission"], r["task"]): r["status"] for r in records}
    expected_keys = {(s, t.id) for s in plan for t in TASKS}
    surprises = sorted(f"{s} {t}: {status.get((s, t), 'no record')}" for s, t in expected_keys
                       if (status.get((s, t)) == "passed") == ((s, t) in must_fail))
    return {"statuses": dict(collections.Counter(status.values())), "as_planned": not surprises,
            "surprises": surprises[:20]}


def print_run(label, figures, students):
    tasks = len(figures["records"])
    notebooks = students * len(CHAPTERS)
    wall = figures["wall_s"]
    print(f"{label}: {wall:.1f} s wall ({wall / 60:.1f} min) for {students} students, {notebooks} notebooks, "
          f"{tasks} tasks")
    print(f"   per student {wall / students:.2f} s, per notebook {wall / notebooks:.3f} s, "
          f"per task {wall / max(tasks, 1) * 1000:.0f} ms")
    first, last = figures["first_result_s"], figures["all_results_s"]
    if first is not None and last is not None:
        print(f"   start-up to the first result from a worker {first:.1f} s; then grading {last - first:.1f} s; "
              f"final writes and exit {wall - last:.1f} s")
    m = figures["memory"]
    print(f"   peak memory (RSS sampled every 0.2 s): grader {m['grader_rss_mb']:.0f} MB, largest process "
          f"{m['largest_process_rss_mb']:.0f} MB, sum over the tree {m['tree_rss_mb']:.0f} MB "
          f"(shared pages of forked children counted in each, so an over-estimate), up to {m['processes']} "
          f"processes; ru_maxrss of the largest ended child {figures['ru_maxrss_children_mb']:.0f} MB")
    cpu, cores = figures["cpu"], os.cpu_count()
    line = "   CPU: "
    if cpu.get("busy_during_share") is not None:
        line += f"the machine was busy {cpu['busy_during_share'] * 100:.0f} % of its {cores} cores during the run; "
    if cpu.get("busy_before_share") is not None:
        line += (f"in the 2 s before it, {cpu['busy_before_share'] * 100:.0f} % (other processes: the figures "
                 f"are a quiet machine's only when this is near 0)")
    print(line)


# ------------------------------------------------------------------------------------------
# Profiling
# ------------------------------------------------------------------------------------------

def profiled_jobs(profile_path, seed, device):
    """One job per task (the reference solution as the student's cell), each run twice in this
    process (the first warms up lazily initialised parts, as the worker host's warm-up does) and
    the second under cProfile: {task: {total, student_cell, probes}} and the combined stats."""
    from gptcourse.checking import probes, worker_host
    from grader import engine, pool

    pool.prepare_tokenizer_files()  # as the worker pool does before starting its hosts
    probes.load_meta_kernels()  # as each host does once
    manifest = engine.load_manifest()
    expectations = engine.Expectations(seed, engine.devices_for(device))
    settings = engine.Settings(out_dir=tempfile.gettempdir())
    combined, split = None, {}
    for task in TASKS:
        source = manifest[task.chapter]["tasks"][task.id]["source"]
        job = engine._job(task.id, source, manifest, expectations.cases(task.id), settings)
        with tempfile.TemporaryDirectory() as scratch:
            os.chdir(scratch)  # a host's child runs in its scratch folder too
            worker_host.run_job(job, scratch)
            profiler = cProfile.Profile()
            start = time.perf_counter()
            profiler.runcall(worker_host.run_job, job, scratch)
            total = time.perf_counter() - start
            os.chdir(REPO)
        stats = pstats.Stats(profiler)
        cumulative = {func[2]: row[3] for func, row in stats.stats.items()
                      if (func[2] == "_exec_student_cell" and func[0] == worker_host.__file__)
                      or (func[2] == "observe" and func[0] == probes.__file__)}
        split[task.id] = {"total": total, "student_cell": cumulative.get("_exec_student_cell", 0.0),
                          "probes": cumulative.get("observe", 0.0)}
        combined = stats if combined is None else combined.add(stats)
    combined.dump_stats(profile_path)
    with open(profile_path + ".split.json", "w") as f:
        json.dump(split, f)


def module_of(filename, function):
    """A short name for where a profiled function lives."""
    if filename == "~":
        if "torch" in function or "Tensor" in function or "_C." in function:
            return "torch (C++ ops)"
        return "built-ins (" + ("waiting: locks, select, sleep" if any(w in function for w in (
            "acquire", "select", "sleep", "poll", "wait")) else "other") + ")"
    if filename.startswith("<"):
        if "frozen" in filename:
            return "python import machinery"
        if "solution cell" in filename:
            return "the student's cell (exec'd)"
        if "course setup" in filename:
            return "course setup and earlier tasks' reference (exec'd)"
        return "other exec'd or frozen code"
    path = os.path.abspath(filename)
    for root, label in ((os.path.join(REPO, "grader"), "grader"),
                        (os.path.join(REPO, "course", "gptcourse"), "gptcourse")):
        if path.startswith(root + os.sep):
            return f"{label}.{os.path.splitext(os.path.relpath(path, root))[0].replace(os.sep, '.')}"
    parts = path.split(os.sep)
    if "site-packages" in parts:
        rest = parts[parts.index("site-packages") + 1:]
        return rest[0].split(".")[0] if rest else "site-packages"
    return "python stdlib" if "python3" in path else path


def by_module(stats, top=12):
    """[(module, own seconds)] of a pstats.Stats, largest first."""
    totals = collections.Counter()
    for (filename, _, function), row in stats.stats.items():
        totals[module_of(filename, function)] += row[2]
    return totals.most_common(top)


def cumulative_of(stats, wanted):
    """{label: cumulative seconds} of named functions: wanted = {label: (file suffix, function)}."""
    found = {}
    for (filename, _, function), row in stats.stats.items():
        for label, (suffix, name) in wanted.items():
            if function == name and filename.endswith(suffix):
                found[label] = found.get(label, 0.0) + row[3]
    return found


GRADER_PHASES = {
    "import grader.engine (torch and the grading modules)": ("grader/engine.py", "<module>"),
    "imports of the grading code": ("grader/engine.py", "_import_grading_code"),
    "reading submissions (discover)": ("grader/submissions.py", "discover"),
    "expected observations (the reference on the hidden cases)": ("grader/engine.py", "expected"),
    "waiting for and reading host replies (WorkerPool.run)": ("grader/pool.py", "run"),
    "verdicts": ("grader/engine.py", "safe_verdict"),
    "writing grades, feedback, report.html": ("grader/report.py", "write_all"),
    "whole grade()": ("grader/engine.py", "grade"),
    "whole command (python -m grader grade)": ("grader/__main__.py", "main"),
}


def summarise_profile(work, wall):
    """Print and return where the time went (grader process, worker hosts, inside a job)."""
    summary = {}
    grader_stats = pstats.Stats(os.path.join(work, "grader.prof"))
    summary["grader_phases_s"] = phases = cumulative_of(grader_stats, GRADER_PHASES)
    phases["start-up before grade(): imports, hosts launched"] = (
        phases.get("whole command (python -m grader grade)", 0.0) - phases.get("whole grade()", 0.0))
    summary["grader_modules_s"] = by_module(grader_stats)
    print(f"\nWhere the time goes (--profile; the grading process ran {grader_stats.total_tt:.1f} s of CPU "
          f"under cProfile, {wall:.1f} s wall)")
    print("  grading process, cumulative time of its phases (nested: grade() holds the ones below it):")
    for label, seconds in sorted(summary["grader_phases_s"].items(), key=lambda kv: -kv[1]):
        print(f"    {seconds:8.1f} s  {label}")
    print("  grading process, own time by module:")
    for module, seconds in summary["grader_modules_s"]:
        print(f"    {seconds:8.1f} s  {module}")

    with open(os.path.join(work, "grader.prof.hosts.json")) as f:
        host_seconds = [(t, s) for t, s in json.load(f) if isinstance(s, (int, float))]
    per_task = collections.defaultdict(list)
    for task, seconds in host_seconds:
        per_task[task].append(seconds)
    chapter_of = {t.id: t.chapter for t in TASKS}
    per_chapter = collections.Counter()
    for task, values in per_task.items():
        per_chapter[chapter_of[task]] += sum(values)
    busy = sum(per_chapter.values())
    summary["host_seconds_total"] = busy
    summary["host_seconds_by_chapter"] = dict(per_chapter)
    summary["host_mean_seconds_by_task"] = {t: sum(v) / len(v) for t, v in per_task.items()}
    print(f"  worker hosts: {busy:.1f} s of task time in all ({len(host_seconds)} tasks; fork to reaping, "
          f"over {max(1, len(set(t for t, _ in host_seconds)))} task kinds); by chapter:")
    for chapter in CHAPTERS:
        count = sum(len(per_task[t.id]) for t in tasks_of(chapter))
        if count:
            print(f"    {chapter:24s} {per_chapter[chapter]:8.1f} s  ({100 * per_chapter[chapter] / busy:4.1f} %, "
                  f"{per_chapter[chapter] / count:.2f} s per task)")
    dearest = sorted(summary["host_mean_seconds_by_task"].items(), key=lambda kv: -kv[1])[:8]
    print("    dearest tasks (mean s per task in a host): " + ", ".join(f"{t} {s:.2f}" for t, s in dearest))

    with open(os.path.join(work, "jobs.prof.split.json")) as f:
        split = json.load(f)
    job_stats = pstats.Stats(os.path.join(work, "jobs.prof"))
    summary["job_split_s"] = split
    summary["job_modules_s"] = by_module(job_stats)
    totals = {key: sum(v[key] for v in split.values()) for key in ("total", "student_cell", "probes")}
    setup = totals["total"] - totals["student_cell"] - totals["probes"]
    print(f"  inside a job (one per task, the reference as the student's cell, run in-process under cProfile; "
          f"{totals['total']:.1f} s for all {len(split)} tasks):")
    print(f"    course setup cells and the earlier tasks' reference: {setup:.1f} s; the student's cell: "
          f"{totals['student_cell']:.2f} s; the probes (the task's cases, training checks included): "
          f"{totals['probes']:.1f} s")
    fork = {t: summary["host_mean_seconds_by_task"][t] - split[t]["total"] for t in split
            if t in summary["host_mean_seconds_by_task"]}
    if fork:
        print(f"    a task in a host minus the same job in-process (fork, exit, reaping, the child's own "
              f"set-up): {sum(fork.values()) / len(fork) * 1000:.0f} ms per task on average")
    dearest = sorted(split.items(), key=lambda kv: -kv[1]["total"])[:6]
    print("    dearest jobs: " + ", ".join(f"{t} {v['total']:.2f} s (probes {v['probes']:.2f})" for t, v in dearest))
    print("    own time by module, all jobs:")
    for module, seconds in summary["job_modules_s"]:
        print(f"      {seconds:8.1f} s  {module}")
    return summary


# ------------------------------------------------------------------------------------------

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


def nbgrader_part(args, work, plan, whole):
    """The first --nbgrader-slice students without a broken notebook, under both graders."""
    students = [s for s in sorted(plan) if not plan[s]["broken"]][: args.nbgrader_slice]
    slice_dir = os.path.join(work, "nbgrader_course")
    start = time.perf_counter()
    nbgrader_course.make_course(slice_dir)
    setup_s = time.perf_counter() - start
    for student in students:
        for chapter in CHAPTERS:
            nbgrader_course.add_submission(slice_dir, student, chapter,
                                           os.path.join(work, "class", student, f"{chapter}.ipynb"))
    mini = grade(slice_dir, os.path.join(work, "out_slice"), args, len(students) * TASKS_PER_STUDENT)
    print_run(f"\ncourse grader, the nbgrader slice alone", mini, len(students))
    chapter_s = {}
    for chapter in CHAPTERS:  # as grade_bench.nbgrader_autograde does, timing each chapter
        start = time.perf_counter()
        nbgrader_course.autograde(slice_dir, chapter, seed=args.seed, device=args.device)
        chapter_s[chapter] = time.perf_counter() - start
    seconds, scores = sum(chapter_s.values()), nbgrader_course.scores(slice_dir)
    per_student = seconds / len(students)
    whole_per_student = whole["wall_s"] / args.students
    print(f"\nnbgrader autograde, {len(students)} students x {len(CHAPTERS)} chapters: {seconds:.1f} s "
          f"({per_student:.1f} s per student; not counted: generate_assignment of every chapter {setup_s:.1f} s)")
    print("   per chapter and student: "
          + ", ".join(f"{c[:2]} {s / len(students):.0f} s" for c, s in chapter_s.items()))
    ratio_whole = per_student / whole_per_student
    ratio_slice = per_student / (mini["wall_s"] / len(students))
    print(f"ratio of the time per student, nbgrader / course grader: {ratio_whole:.1f}x against the whole "
          f"class's run, {ratio_slice:.1f}x against the course grader on the same {len(students)} students "
          f"(the issue asks for at least 20x)")
    course_points = {(r["submission"], r["task"]): r["points"] for r in mini["records"]}
    differ = sorted(f"{s} {t}: nbgrader {score:g}, course grader {course_points.get((s, t))}"
                    for (s, t), (score, _) in scores.items() if score != course_points.get((s, t)))
    print(f"points: course grader {sum(course_points.values())}, nbgrader {sum(s for s, _ in scores.values()):g}; "
          f"every task agrees: {'yes' if not differ else 'NO'}")
    for line in differ[:20]:
        print(f"  differs: {line}")
    return {"students": len(students), "seconds": seconds, "per_student_s": per_student, "setup_s": setup_s,
            "course_grader_slice_s": mini["wall_s"], "chapter_s": chapter_s, "ratio_vs_whole_class": ratio_whole,
            "ratio_vs_same_slice": ratio_slice, "differ": differ}


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
            from grader.local_cluster import LocalCluster

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
