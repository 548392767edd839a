"""The grading engine: submissions in, grades.csv / grades.json / feedback out.

For every (submission, task) a worker process runs the student's task cell and the task's
probes (gptcourse/checking/worker_host/). This process only compares the returned observations with the
reference's (computed here, never in a process that ran student code). A crash, hang,
exit or memory bomb ends only its own worker. Results are appended to results.jsonl as
they arrive, so an interrupted batch resumes where it stopped.

The stages of `grade`, in order:
1. discover     the submissions and their notebooks (grader/grading/submissions.py: discover);
2. prepare      per task, the student's cell and the worker's job, or why there is none
                (_prepare, _prepared, worker_job); the records of an earlier run are kept
                (gradefolder.load_results);
3. expected     the cases and the reference's observations, computed here (_compute_expected,
                Expectations);
4. run          the jobs in sandboxed workers (_run_and_judge; grader/grading/pool.py, through prepare_workers);
5. verdict      observations against expectations: status, message and finding, as each job
                ends (_run_and_judge; grader/grading/verdict.py, through safe_verdict);
6. write        results.jsonl as records arrive, then grades, feedback, the class report and
                run.json (grader/grading/gradefolder.py, grader/outputs/report.py).
"""
import json
import os
import secrets
import sys

import torch

from gptcourse.checking.findings import Finding
from gptcourse.checking.tasks import all_tasks, carried_tasks, chapter_names, chapters_for, get_task, tasks_of
from grader.grading import gradefolder, preflight, startup
from grader.grading.startup import Settings, devices_for  # noqa: F401 - what callers of grade() build
from grader.grading.policy import PolicyError
from grader.outputs import late, report
from grader.paths import load_manifest
from grader.grading.submissions import check_cell_note, discover, find_task_cell, graded_notebooks, readable
from grader.grading.verdict import Verdict, verdict


class Expectations:
    """Cases and expected observations per task for this run's seed, each computed once.

    Cases are cheap and needed to start workers; the reference's observations are only
    needed to judge, so they are computed while the first workers run. Each hidden case runs
    on every device of the run and, when its kind supports it, once more on the meta device
    right after the CPU, to catch tensors created on the CPU inside the code (see
    gptcourse/checking/probes.py) on graders without a GPU.
    """

    def __init__(self, seed, devices):
        self.seed, self.devices = seed, devices
        self._cases, self._origins, self._expected = {}, {}, {}

    def cases(self, task_id):
        if task_id not in self._cases:
            from gptcourse.checking.probes import META, device_pass_supported
            from grader.chapters import case_for_device, hidden_cases

            cases, origins = [], []
            for index, case in enumerate(hidden_cases(task_id, self.seed)):
                for device in self.devices:
                    on_device = case_for_device(case, device)
                    cases.append(on_device)
                    # A case changed for the device (its dropout, say) has expected numbers of its own.
                    same = on_device.args == case.args and on_device.label == case.label
                    origins.append((index, False) if same else (index, device))
                    if device == "cpu" and device_pass_supported(case):
                        cases.append(case.on(META))
                        origins.append((index, True))
            self._cases[task_id], self._origins[task_id] = cases, origins
        return self._cases[task_id]

    def expected(self, task_id):
        """[(expected observations, known mistakes function)] aligned with cases(task_id)."""
        if task_id not in self._expected:
            from grader.grading.expectations import expectations

            # A case's CPU and CUDA runs expect the same (CPU) numbers: compute them once.
            computed = {}
            for case, origin in zip(self.cases(task_id), self._origins[task_id]):
                if origin not in computed:
                    computed[origin] = expectations(case)
            self._expected[task_id] = [computed[origin] for origin in self._origins[task_id]]
        return self._expected[task_id]

    def for_task(self, task_id):
        return self.cases(task_id), self.expected(task_id)


# ------------------------------------------------------------------------------------------
# Jobs
# ------------------------------------------------------------------------------------------

def worker_job(task_id, source, manifest, cases, settings):
    """What a worker needs for one task: the setup of the chapters involved, the reference of
    the earlier tasks the task carries (its chapter's earlier tasks and its `needs`,
    transitively), the student's cell and the cases. earlier_names are the graded names
    those references define, for the probes' context."""
    task = get_task(task_id)
    carried = carried_tasks(task_id)
    return {
        "task": task_id,
        "names": list(task.names),
        "earlier_names": [name for t in carried for name in t.carried_names],
        "setup_sources": [s for chapter in chapters_for(task_id) for s in manifest[chapter]["setup"]],
        "reference_sources": [manifest[t.chapter]["tasks"][t.id]["source"] for t in carried],
        "student_source": source,
        "student_filename": f"<your solution cell of task {task_id}>",
        "cases": [case.to_data() for case in cases],
        "memory_limit_mb": settings.memory_mb,
        "threads": 1,
    }


def grade(paths, settings, runners=None):
    """Grade every submission under `paths`; returns the list of task records.

    runners: the JobRunners of startup.start(settings), which ran the run's preflight (the command
    line starts them before importing torch here, so that the hosts' imports and this one
    overlap); by default they are started now, and closed at the end.

    Raises preflight.PreflightError, having graded nothing, when the machine lacks what the run
    needs (grader/grading/preflight.py).
    """
    owned = runners is None  # runners given by the caller are the caller's to close
    if owned:
        runners = startup.start(settings)
    threads = torch.get_num_threads()
    try:
        manifest = load_manifest()
        submissions = discover(paths, os.path.join(settings.out_dir, ".unpacked"))
        chapters = graded_chapters(submissions)
        preflight.raise_if(preflight.data_problems(chapters))
        workers = prepare_workers(runners, manifest, chapters)
        # This process computes the expected observations and judges with one torch thread, as
        # every worker does. With torch's default (a thread per core) those threads wait on each
        # other for cores the workers hold: on a busy 2-core machine the expected observations took
        # 43 s instead of 2 s (docs/benchmarks.md). One thread also means the reference's numbers
        # are summed in the same order as the worker's.
        torch.set_num_threads(1)
        return _grade_all(paths, submissions, settings, manifest, workers, runners.devices())
    finally:
        torch.set_num_threads(threads)
        if owned:
            runners.close()


def graded_chapters(submissions):
    """The chapters of the course that some submission has a notebook of, in course order."""
    found = {notebook.chapter for submission in submissions for notebook in graded_notebooks(submission)}
    return [chapter for chapter in chapter_names() if chapter in found]


def _grade_all(paths, submissions, settings, manifest, workers, devices):
    gradefolder.remove_unfinished_writes(settings.out_dir)
    # The late policy and the submission times, read before any student code runs (without a
    # sandbox it could write to this folder); written back from memory with the grades.
    try:
        policy_setting = settings.late if settings.late is not None else late.read_setting(settings.out_dir)
    except PolicyError as exc:
        raise preflight.PreflightError(str(exc)) from None
    times = late.found_times(submissions)
    run = _run_settings(settings, workers.isolation, paths, devices)
    expectations = Expectations(run["seed"], devices)
    done = gradefolder.load_results(settings.out_dir, run, manifest)

    _warn_about_ungraded(submissions)
    records_by_key, pending = {}, []
    for submission in submissions:
        for notebook in graded_notebooks(submission):
            for task in tasks_of(notebook.chapter):
                key = (submission.id, notebook.sha, task.id)
                if key in done:
                    records_by_key[key] = done[key]
                else:
                    pending.append((key, submission, notebook, task))

    results_path = os.path.join(settings.out_dir, gradefolder.RESULTS)
    with gradefolder.open_results(results_path) as results_file:
        for key, record in _grade_pending(pending, manifest, expectations, settings, run, workers):
            records_by_key[key] = record
            results_file.write(json.dumps(record) + "\n")
            results_file.flush()

    workers.end_strays()
    ordered = [records_by_key[k] for k in sorted(records_by_key, key=_record_order(records_by_key))]
    # Rewritten from memory: a line appended by anyone else during the run does not survive it.
    gradefolder.write_atomically(results_path, "".join(json.dumps(r) + "\n" for r in ordered))
    graded = report.write_all(ordered, settings.out_dir, run, setting=policy_setting, times=times)
    gradefolder.write_atomically(os.path.join(settings.out_dir, gradefolder.RUN), json.dumps(run, indent=1))
    return graded


def _record_order(records_by_key):
    task_index = {task.id: i for i, task in enumerate(all_tasks())}
    return lambda key: (key[0], task_index[key[2]], records_by_key[key]["notebook"])


def _run_settings(settings, isolation, paths=(), devices=("cpu",)):
    """The run's seed is chosen once and kept, so a resumed batch grades with the same cases.

    The graded paths (absolute) and the limits are recorded too: `python -m grader regrade`
    grades the same submissions again with them (grader/grading/regrade.py)."""
    path = os.path.join(settings.out_dir, gradefolder.RUN)
    previous_seed = gradefolder.read_run(settings.out_dir, required=False).get("seed")
    if not isinstance(previous_seed, int) or isinstance(previous_seed, bool):
        previous_seed = secrets.randbelow(2**31)
    seed = settings.seed if settings.seed is not None else previous_seed
    run = {"seed": seed, "device": settings.device, "devices": list(devices), "torch": torch.__version__,
           "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
           "isolation": isolation.to_data(),
           "paths": [os.path.abspath(p) for p in paths], "timeout": settings.timeout,
           "memory_mb": settings.memory_mb}
    gradefolder.write_atomically(path, json.dumps(run, indent=1))
    return run


def _warn_about_ungraded(submissions):
    """Say which submissions and broken notebooks get no grade at all (no chapter to grade)."""
    for submission in submissions:
        graded = graded_notebooks(submission)
        for notebook in submission.notebooks:
            if notebook.error and not notebook.chapter:
                print(f"warning: {submission.id}: {readable(notebook.path)}: {notebook.error} (its chapter is "
                      f"unknown, so it is not graded)", file=sys.stderr)
        if not graded:
            print(f"warning: {submission.id}: no notebook of a graded chapter was found "
                  f"({readable(submission.path)})", file=sys.stderr)


def _grade_pending(pending, manifest, expectations, settings, run, workers):
    """Yield (key, record) as workers finish; notebooks that cannot run never reach a worker.

    Raises preflight.PreflightError before any record is yielded when a task cannot be prepared
    for any submission (always the same error), or its expected observations cannot be computed:
    that is the grader's or the machine's problem, never the students'."""
    jobs, unprepared = _prepare(pending, manifest, expectations, settings, run)  # stage 2
    # The hosts are still importing torch: compute what the verdicts will need meanwhile.
    _compute_expected(jobs, expectations)  # stage 3
    yield from unprepared
    progress = _progress_bar(len(pending), settings.progress)
    progress.update(len(pending) - len(jobs))
    yield from _run_and_judge(jobs, expectations, settings, workers, progress)  # stages 4 and 5
    progress.close()


def _prepare(pending, manifest, expectations, settings, run):
    """Stage 2: ([(key, record so far, worker job)], [(key, finished record)]): a job for each
    task whose cell can run, a finished record (error or rejected) for each that cannot."""
    jobs, unprepared, failures = [], [], {}
    for key, submission, notebook, task in pending:
        base = _base_record(submission, notebook, task, manifest, run)
        base["notes"] = list(submission.notes)
        try:
            job, problem = _prepared(base, notebook, task, manifest, expectations, settings)
            # An unreadable notebook is rejected as a whole; a missing or broken cell is this task's error.
            problem_finding = Finding("rejected" if notebook.error else "error", detail=problem or "")
        except Exception as exc:  # noqa: BLE001 - last resort: one notebook must not stop the batch
            error = f"{type(exc).__name__}: {exc}"
            failures.setdefault(task.id, []).append(error)
            record = gradefolder.finished(base, "error", f"the grader could not prepare this task ({error}); ask your "
                                            f"instructor to look at it",
                             finding=Finding("grader fault", detail="the grader could not prepare this task"))
            record["grader_fault"] = True  # not kept on resume: graded again
            unprepared.append((key, gradefolder.readable_record(record)))
            continue
        if problem:
            unprepared.append((key, gradefolder.readable_record(gradefolder.finished(base, "error", problem, finding=problem_finding))))
        else:
            jobs.append((key, base, job))
    _stop_on_tasks_that_never_prepare(failures, pending)
    return jobs, unprepared


def _compute_expected(jobs, expectations):
    """Stage 3: the reference's observations for every task that has a job, computed here."""
    for task_id in dict.fromkeys(base["task"] for _, base, _ in jobs):
        try:
            expectations.expected(task_id)
        except Exception as exc:  # noqa: BLE001 - the reference's side: no student is at fault
            preflight.raise_if([f"the grader could not compute what task {task_id} expects "
                                f"({type(exc).__name__}: {exc}); a problem of this machine or of the grader"])


def _run_and_judge(jobs, expectations, settings, workers, progress):
    """Stages 4 and 5: run the jobs in the workers and yield (key, finished record) with each
    verdict, in the order the hosts finish."""
    # Outcomes: {"result": <checked worker message>}, {"killed": ...}, {"died": ...} or
    # {"malformed": why} (see grader/grading/pool.py).
    outcomes = workers.run([(item, item[2]) for item in jobs], settings.timeout, settings.memory_mb)
    for (key, base, _), outcome in outcomes:
        progress.update(1)
        cases, expected = expectations.for_task(base["task"])
        judged = safe_verdict(base["task"], cases, expected, outcome, settings)
        base["notes"] += judged.warnings
        yield key, gradefolder.readable_record(gradefolder.finished(base, judged.status, judged.message, outcome.get("seconds"),
                                            judged.finding))


def _stop_on_tasks_that_never_prepare(failures, pending):
    """A task that failed to prepare for every submission that has it, always with the same error,
    was never the students' doing: stop the run (nothing is recorded for it) and say so."""
    problems = []
    for task_id, errors in failures.items():
        submissions = sum(1 for _, _, _, task in pending if task.id == task_id)
        if len(errors) == submissions and len(set(errors)) == 1:
            problems.append(f"task {task_id} could not be prepared for any of the {submissions} submission(s) "
                            f"({errors[0]}); fix that and grade again: its tasks are not recorded, so the next "
                            f"grade or regrade of this folder grades them")
    preflight.raise_if(problems)


def _prepared(base, notebook, task, manifest, expectations, settings):
    """(job, None) for a task a worker must run, or (None, why it cannot run); adds notes to base."""
    if notebook.error:
        return None, notebook.error
    source, note = find_task_cell(notebook, task.id)
    if source is None:
        return None, note
    check_note = check_cell_note(notebook, task.id, manifest[task.chapter]["tasks"][task.id]["check_source"])
    base["notes"] += [n for n in (note, check_note) if n]
    return worker_job(task.id, source, manifest, expectations.cases(task.id), settings), None


def _base_record(submission, notebook, task, manifest, run):
    return gradefolder.new_record(submission.id, os.path.basename(notebook.path), notebook.sha, task,
                                  manifest[task.chapter]["tasks"][task.id]["points"], run)


def _progress_bar(total, enabled):
    from tqdm import tqdm

    return tqdm(total=total, unit="task", desc="grading", disable=not enabled, leave=False)


def safe_verdict(task_id, cases, expected, outcome, settings):
    """The verdict, confined: whatever a worker reported, judging it must not stop the batch."""
    try:
        return verdict(task_id, cases, expected, outcome, settings)
    except Exception as exc:  # noqa: BLE001 - the report passed the schema but still broke the judge
        return Verdict("error", f"the grader could not judge what your code reported ({type(exc).__name__}); "
                                f"ask your instructor to look at this task", [],
                       Finding("grader fault", detail="the grader could not judge what the code reported"))


# ------------------------------------------------------------------------------------------
# Worker pool
# ------------------------------------------------------------------------------------------

def prepare_workers(runners, manifest, chapters):
    """The run's pool (on a cluster, its workers checked for `chapters`), with this run's feedback
    cleaning.

    Everything this process needs is imported before the first job is sent, so nothing a
    submission's code writes can change the code that grades it. (Hosts may start earlier:
    until they get a job they only import torch.)
    """
    from grader.grading import scrub

    import_grading_code(chapters)
    workers = runners.for_chapters(chapters)
    workers.scrub = scrub.Scrubber.for_manifest(manifest).message
    return workers


def import_grading_code(chapters):
    """Import every module that computes expectations or judges, before any student code runs
    (without a sandbox a worker could otherwise change a file this process imports later): the
    grader's chapter modules and the reference of the graded chapters and of the chapters they carry. The
    others are never used by this run; importing them would run their chapters' setup cells,
    which may read data that the preflight did not ask for."""
    import grader.chapters
    import grader.grading.expectations  # noqa: F401
    import grader.reference
    import grader.grading.verdict  # noqa: F401

    needed = {c for chapter in chapters for task in tasks_of(chapter) for c in chapters_for(task.id)}
    for chapter in chapter_names():
        if chapter in needed:
            grader.chapters.chapter_module(chapter)
            grader.reference.chapter_module(chapter)
