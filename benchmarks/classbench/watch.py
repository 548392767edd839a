"""One grader run of benchmarks/class_bench.py, watched: a fresh `python -m grader grade` process,
its wall time, when its first and last results arrived, the peak memory of its process tree and
how busy the machine was; then its statuses against what the class was built to get."""
import collections
import json
import os
import resource
import subprocess
import sys
import threading
import time

from classbench import CLASS_BENCH, REPO
from gptcourse.checking.tasks import CHAPTERS, TASKS
from gptcourse.checking.worker_host.processes import descendants, process_table, rss_mb


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
        tree = [self.pid] + descendants(self.pid, process_table())
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
        command = [sys.executable, CLASS_BENCH, "--profiled-grader", profile_path, "--", *grader_args]
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
