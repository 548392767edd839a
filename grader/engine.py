"""The grading engine: submissions in, grades.csv / grades.json / feedback out.

For every (submission, task) a worker process runs the student's task cell and the task's
probes (worker.py). This process only compares the returned observations with the
reference's (computed here, never in a process that ran student code). A crash, hang,
exit or memory bomb ends only its own worker. Results are appended to results.jsonl as
they arrive, so an interrupted batch resumes where it stopped.
"""
import json
import multiprocessing
import multiprocessing.connection
import os
import secrets
import signal
import time
from collections import deque
from dataclasses import dataclass

import torch

from gptcourse import records
from gptcourse.tasks import TASKS, get_task, tasks_before, tasks_of
from grader import report
from grader.submissions import check_cell_note, discover, find_task_cell
from grader.verdict import verdict

MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "manifest.json")
WORKER_PRELOAD = ["numpy", "torch", "gptcourse.probes", "grader.worker"]


@dataclass
class Settings:
    out_dir: str
    device: str = "auto"  # auto | cpu | cuda
    jobs: int = 2
    timeout: float = 60.0  # seconds per task
    memory_mb: int = 2048  # per worker, on top of what torch itself uses
    seed: int = None
    progress: bool = True


def load_manifest():
    with open(MANIFEST, encoding="utf-8") as f:
        return json.load(f)


def devices_for(option):
    """The device matrix: always the CPU; CUDA too when asked for or (auto) present."""
    if option == "cpu":
        return ["cpu"]
    if option == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: no CUDA GPU is available on this machine")
        return ["cpu", "cuda"]
    if option == "auto":
        return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    raise SystemExit(f"--device must be auto, cpu or cuda, not {option!r}")


class Expectations:
    """Cases and expected observations per task for this run's seed, each computed once.

    Cases are cheap and needed to start workers; the reference's observations are only
    needed to judge, so they are computed while the first workers run.
    """

    def __init__(self, seed, devices):
        self.seed, self.devices = seed, devices
        self._cases, self._expected = {}, {}

    def cases(self, task_id):
        if task_id not in self._cases:
            from grader.hidden.cases import hidden_cases

            self._cases[task_id] = [case.on(device) for case in hidden_cases(task_id, self.seed)
                                    for device in self.devices]
        return self._cases[task_id]

    def expected(self, task_id):
        """[(expected observations, variants function)] aligned with cases(task_id)."""
        if task_id not in self._expected:
            from grader.hidden.expectations import expectations

            # cases() repeats each case once per device: compute each case's expectations once.
            cases = self.cases(task_id)
            step = len(self.devices)
            computed = [expectations(case) for case in cases[::step]]
            self._expected[task_id] = [computed[i // step] for i in range(len(cases))]
        return self._expected[task_id]

    def for_task(self, task_id):
        return self.cases(task_id), self.expected(task_id)


# ------------------------------------------------------------------------------------------
# Jobs
# ------------------------------------------------------------------------------------------

def _job(task_id, source, manifest, cases, settings):
    task = get_task(task_id)
    chapters = list(dict.fromkeys(t.chapter for t in tasks_before(task_id) + [task]))
    earlier = tasks_before(task_id)
    return {
        "task": task_id,
        "names": list(task.names),
        "setup_sources": [s for chapter in chapters for s in manifest[chapter]["setup"]],
        "reference_sources": [manifest[t.chapter]["tasks"][t.id]["source"] for t in earlier],
        "student_source": source,
        "student_filename": f"<your solution cell of task {task_id}>",
        "cases": [case.to_data() for case in cases],
        "memory_limit_mb": settings.memory_mb,
        "threads": 1,
    }


def grade(paths, settings):
    """Grade every submission under `paths`; returns the list of task records."""
    os.makedirs(settings.out_dir, exist_ok=True)
    start_workers_early()
    manifest = load_manifest()
    run = _run_settings(settings)
    devices = devices_for(settings.device)
    expectations = Expectations(run["seed"], devices)
    done = _load_results(settings.out_dir, run["seed"])

    submissions = discover(paths, os.path.join(settings.out_dir, ".unpacked"))
    records_by_key, pending = {}, []
    for submission in submissions:
        for notebook in _graded_notebooks(submission):
            for task in tasks_of(notebook.chapter):
                key = (submission.id, notebook.sha, task.id)
                if key in done:
                    records_by_key[key] = done[key]
                else:
                    pending.append((key, submission, notebook, task))

    results_path = os.path.join(settings.out_dir, "results.jsonl")
    with open(results_path, "a", encoding="utf-8") as results_file:
        for key, record in _grade_pending(pending, manifest, expectations, settings, run):
            records_by_key[key] = record
            results_file.write(json.dumps(record) + "\n")
            results_file.flush()

    ordered = [records_by_key[k] for k in sorted(records_by_key, key=_record_order(records_by_key))]
    report.write_all(ordered, settings.out_dir, run)
    return ordered


def _record_order(records_by_key):
    task_index = {task.id: i for i, task in enumerate(TASKS)}
    return lambda key: (key[0], task_index[key[2]], records_by_key[key]["notebook"])


def _graded_notebooks(submission):
    """Notebooks of known chapters; the last one wins when a chapter appears twice."""
    by_chapter = {}
    for notebook in submission.notebooks:
        if notebook.chapter:
            by_chapter[notebook.chapter] = notebook
    return list(by_chapter.values())


def _run_settings(settings):
    """The run's seed is chosen once and kept, so a resumed batch grades with the same cases."""
    path = os.path.join(settings.out_dir, "run.json")
    previous = json.load(open(path)) if os.path.exists(path) else {}
    seed = settings.seed if settings.seed is not None else previous.get("seed", secrets.randbelow(2**31))
    run = {"seed": seed, "device": settings.device, "torch": torch.__version__,
           "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    with open(path, "w") as f:
        json.dump(run, f, indent=1)
    return run


def _load_results(out_dir, seed):
    done = {}
    path = os.path.join(out_dir, "results.jsonl")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by an interruption
            if record.get("seed") == seed:
                done[(record["submission"], record["notebook_sha"], record["task"])] = record
    return done


def _grade_pending(pending, manifest, expectations, settings, run):
    """Yield (key, record) as workers finish; notebooks that cannot run never reach a worker."""
    jobs = []
    for key, submission, notebook, task in pending:
        base = _base_record(submission, notebook, task, manifest, run)
        if notebook.error:
            yield key, _finish(base, "error", notebook.error)
            continue
        source, note = find_task_cell(notebook, task.id)
        if source is None:
            yield key, _finish(base, "error", note)
            continue
        check_note = check_cell_note(notebook, task.id, manifest[task.chapter]["tasks"][task.id]["check_source"])
        base["notes"] = [n for n in (note, check_note) if n]
        cases = expectations.cases(task.id)
        jobs.append((key, base, _job(task.id, source, manifest, cases, settings)))

    progress = _progress_bar(len(pending), settings.progress)
    progress.update(len(pending) - len(jobs))
    for (key, base, _), outcome in run_jobs(jobs, settings):
        progress.update(1)
        cases, expected = expectations.for_task(base["task"])
        status, message, warnings = verdict(base["task"], cases, expected, outcome, settings)
        base["notes"] += warnings
        yield key, _finish(base, status, message)
    progress.close()


def _base_record(submission, notebook, task, manifest, run):
    return {
        "submission": submission.id,
        "notebook": os.path.basename(notebook.path),
        "notebook_sha": notebook.sha,
        "chapter": task.chapter,
        "task": task.id,
        "names": list(task.names),
        "level": task.level,
        "max_points": manifest[task.chapter]["tasks"][task.id]["points"],
        "seed": run["seed"],
        "device": run["device"],
        "notes": [],
        "started": time.time(),
    }


def _finish(record, status, feedback):
    record = dict(record)
    record["status"] = status
    record["points"] = record["max_points"] if status == "passed" else 0
    record["feedback"] = feedback
    record["duration_s"] = round(time.time() - record.pop("started"), 3)
    return record


def _progress_bar(total, enabled):
    from tqdm import tqdm

    return tqdm(total=total, unit="task", desc="grading", disable=not enabled, leave=False)


# ------------------------------------------------------------------------------------------
# Worker pool
# ------------------------------------------------------------------------------------------

def _context():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(WORKER_PRELOAD)
    return ctx


def start_workers_early():
    """Start the fork server now: it imports torch while this process prepares the cases."""
    _context()
    from multiprocessing import forkserver

    forkserver.ensure_running()


def run_jobs(jobs, settings):
    """Run (item, job) pairs in at most settings.jobs workers; yield (item, outcome).

    outcome: {"result": <worker message>} or {"killed": "timeout" | "memory", ...} or
    {"died": exit code}.
    """
    from grader.worker import run_job

    ctx = _context()
    queue, running = deque(jobs), {}
    while queue or running:
        while queue and len(running) < max(1, settings.jobs):
            item = queue.popleft()
            receiver, sender = ctx.Pipe(duplex=False)
            process = ctx.Process(target=run_job, args=(sender, item[2]), daemon=True)
            process.start()
            sender.close()  # only the worker holds the sending end: its death means EOF here
            running[receiver] = (item, process, time.monotonic())
        ready = multiprocessing.connection.wait(list(running), timeout=0.05)
        for receiver in ready:
            item, process, _ = running.pop(receiver)
            yield item, _collect(receiver, process)
        now = time.monotonic()
        for receiver, (item, process, started) in list(running.items()):
            if now - started > settings.timeout:
                outcome = {"killed": "timeout", "limit": settings.timeout}
            elif _rss_mb(process.pid) > settings.memory_mb + 1024:
                outcome = {"killed": "memory", "limit": settings.memory_mb}
            else:
                continue
            _kill(process)
            receiver.close()
            del running[receiver]
            yield item, outcome


def _collect(receiver, process):
    try:
        message = receiver.recv_bytes()
    except (EOFError, OSError):
        process.join(5)
        return {"died": process.exitcode}
    finally:
        receiver.close()
    process.join(5)
    if process.is_alive():
        _kill(process)
    try:
        return {"result": records.loads(message.decode("utf-8"))}
    except (ValueError, UnicodeDecodeError):
        return {"died": "sent an unreadable message"}


def _kill(process):
    for kill in (lambda: os.killpg(process.pid, signal.SIGKILL), process.kill):
        try:
            kill()
        except (ProcessLookupError, PermissionError, OSError):
            pass
    process.join(5)


def _rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
