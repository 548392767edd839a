"""--profile of benchmarks/class_bench.py: where the time of grading a class goes.

- profiled_grader runs `python -m grader ...` in this process under cProfile and keeps each
  task's time in its worker host (the `seconds` of the host's reply, fork to reaping), through
  the pool's public reply_observers (grader/grading/pool.py);
- profiled_jobs runs one job per task (the reference solution as the student's cell) in this
  process under cProfile, to split a job into course setup, the student's cell and the probes;
- summarise_profile prints and returns where the time went, by phase and by module.

This module imports nothing of the course at its top: profiled_grader must start the profiler
before the grader imports torch and the course (its start-up is part of what is measured).
"""
import collections
import cProfile
import json
import os
import pstats
import tempfile
import time

from classbench import REPO


def profiled_grader(profile_path, grader_args):
    """Run `python -m grader ...` in this process under cProfile; also keep each task's time in its
    worker host. Writes the profile to profile_path and the hosts' times to profile_path.hosts.json."""
    profiler = cProfile.Profile()
    profiler.enable()  # before the grader's imports: they are part of its start-up
    from grader.grading import pool

    host_seconds = []

    def note_host_seconds(job, reply):
        if isinstance(job, dict) and isinstance(reply, dict):
            host_seconds.append((job.get("task"), reply.get("seconds")))

    pool.reply_observers.append(note_host_seconds)
    try:
        from grader.__main__ import main

        code = main(grader_args)
    finally:
        pool.reply_observers.remove(note_host_seconds)
        profiler.disable()
        profiler.dump_stats(profile_path)
        with open(profile_path + ".hosts.json", "w") as f:
            json.dump(host_seconds, f)
    return code


def profiled_jobs(profile_path, seed, device):
    """One job per task (the reference solution as the student's cell), each run twice in this
    process (the first warms up lazily initialised parts, as the worker host's warm-up does) and
    the second under cProfile: {task: {total, student_cell, probes}} and the combined stats."""
    from gptcourse.checking import probes
    from gptcourse.checking.tasks import TASKS
    from gptcourse.checking.worker_host import job as worker_job
    from grader.grading import engine, pool

    pool.prepare_tokenizer_files()  # as the worker pool does before starting its hosts
    probes.load_meta_kernels()  # as each host does once
    manifest = engine.load_manifest()
    expectations = engine.Expectations(seed, engine.devices_for(device))
    settings = engine.Settings(out_dir=tempfile.gettempdir())
    combined, split = None, {}
    for task in TASKS:
        source = manifest[task.chapter]["tasks"][task.id]["source"]
        job = engine.worker_job(task.id, source, manifest, expectations.cases(task.id), settings)
        with tempfile.TemporaryDirectory() as scratch:
            os.chdir(scratch)  # a host's child runs in its scratch folder too
            worker_job.run_job(job, scratch)
            profiler = cProfile.Profile()
            start = time.perf_counter()
            profiler.runcall(worker_job.run_job, job, scratch)
            total = time.perf_counter() - start
            os.chdir(REPO)
        stats = pstats.Stats(profiler)
        cumulative = {func[2]: row[3] for func, row in stats.stats.items()
                      if (func[2] == "exec_student_cell" and func[0] == worker_job.__file__)
                      or (func[2] == "observe" and func[0] == probes.__file__)}
        split[task.id] = {"total": total, "student_cell": cumulative.get("exec_student_cell", 0.0),
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
    "import grader.grading.engine (torch and the grading modules)": ("grader/grading/engine.py", "<module>"),
    "imports of the grading code": ("grader/grading/engine.py", "import_grading_code"),
    "reading submissions (discover)": ("grader/grading/submissions.py", "discover"),
    "expected observations (the reference on the hidden cases)": ("grader/grading/engine.py", "expected"),
    "waiting for and reading host replies (WorkerPool.run)": ("grader/grading/pool.py", "run"),
    "verdicts": ("grader/grading/engine.py", "safe_verdict"),
    "writing grades, feedback, report.html": ("grader/outputs/report.py", "write_all"),
    "whole grade()": ("grader/grading/engine.py", "grade"),
    "whole command (python -m grader grade)": ("grader/__main__.py", "main"),
}


def summarise_profile(work, wall):
    """Print and return where the time went (grader process, worker hosts, inside a job)."""
    from gptcourse.checking.tasks import CHAPTERS, TASKS, tasks_of

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
