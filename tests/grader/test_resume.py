"""A batch killed at any moment loses no grade and grades nothing twice.

The fast tests call the engine's resume helpers directly. The slow test runs the grader's
command line as an instructor does, kills it with SIGKILL at random moments (during start-up,
mid-way, right as results are appended, while the final grade files are written), restarts the
same command each time until a run completes, and compares the outcome with one uninterrupted
run with the same seed.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from factory import REPO, corpus_items, filled_notebook, manifest, write_notebook
from gptcourse.checking.worker_host import processes
from gptcourse.checking.tasks import TASKS, tasks_of
from grader.grading import gradefolder

CH02, CH03 = "02_attention", "03_multihead_attention"
SEED = 4242
RUN = {"seed": SEED, "device": "cpu"}


def record_line(task_id, submission="s", status="passed", feedback="fine"):
    """One results.jsonl line, as the engine writes it."""
    task = next(t for t in TASKS if t.id == task_id)
    record = {"submission": submission, "notebook": "n.ipynb", "notebook_sha": "abc", "chapter": task.chapter,
              "task": task_id, "names": list(task.names), "level": task.level, "max_points": 1,
              "seed": SEED, "device": "cpu", "notes": [], "status": status, "points": 1,
              "feedback": feedback, "duration_s": 0.25}
    return json.dumps(record)


# ------------------------------------------------------------------------------------------
# Fast: a half-written last line, and temporary files left by a kill
# ------------------------------------------------------------------------------------------

def test_a_half_written_last_line_is_ignored_and_its_task_graded_again(tmp_path):
    path = tmp_path / "results.jsonl"
    whole, cut = record_line("3.1"), record_line("3.2")
    path.write_text(whole + "\n" + cut[: len(cut) // 2])  # killed in the middle of writing 3.2
    done = gradefolder.load_results(str(tmp_path), RUN, manifest())
    assert list(done) == [("s", "abc", "3.1")]  # 3.2 is pending again, and nothing crashed


def test_a_record_appended_after_a_half_written_line_survives_the_next_resume(tmp_path):
    """The run after the kill appends its records; if it is killed too, the next resume must
    still read them. Appended straight after the fragment (no newline in between), the first
    new record and the fragment made one line that no resume could read: that record was lost
    and its task graded a second time."""
    path = tmp_path / "results.jsonl"
    cut = record_line("3.2")
    path.write_text(record_line("3.1") + "\n" + cut[:40])
    with gradefolder.open_results(str(path)) as results_file:  # what the grader appends with
        results_file.write(record_line("2.1") + "\n")
        results_file.flush()
    done = gradefolder.load_results(str(tmp_path), RUN, manifest())
    assert sorted(done) == [("s", "abc", "2.1"), ("s", "abc", "3.1")]
    # The fragment became a line of its own (skipped); a file that ends properly gets no blank line.
    assert path.read_text().splitlines()[1] == cut[:40]
    with gradefolder.open_results(str(path)) as results_file:
        results_file.write(record_line("2.2") + "\n")
    assert "" not in path.read_text().splitlines()


def test_an_empty_or_missing_results_file_is_opened_for_appending(tmp_path):
    path = tmp_path / "results.jsonl"
    for _ in range(2):  # missing, then empty
        with gradefolder.open_results(str(path)):
            pass
        assert path.read_text() == ""


def test_temporary_files_of_a_killed_write_are_removed_before_a_run(tmp_path):
    (tmp_path / "feedback").mkdir()
    stale = [tmp_path / ".writing-abc123", tmp_path / "feedback" / ".writing-x"]
    for path in stale:
        path.write_text("half a grades.json")
    kept = [tmp_path / "grades.json", tmp_path / "feedback" / "alice.md", tmp_path / "writing-not-ours"]
    for path in kept:
        path.write_text("kept")
    (tmp_path / ".writing-dir").mkdir()  # not one of ours: a folder is left alone
    gradefolder.remove_unfinished_writes(str(tmp_path))
    assert not any(path.exists() for path in stale)
    assert all(path.read_text() == "kept" for path in kept) and (tmp_path / ".writing-dir").is_dir()


# ------------------------------------------------------------------------------------------
# Slow: the command line, killed at random moments
# ------------------------------------------------------------------------------------------

# Six students, both fast chapters (7 tasks each), some with one or two known mistakes.
MISTAKES = {
    "s0": [], "s1": ["2.4__wrong_fill_zero"], "s2": [], "s3": ["3.1__wrong_sum_heads"],
    "s4": ["2.1__wrong_scaled_scores", "3.2__wrong_mask_includes_diagonal"], "s5": [],
}


def build_class(folder):
    items = {item.id: item for item in corpus_items()}
    for student, mistakes in MISTAKES.items():
        overrides = {items[m].task: items[m].source for m in mistakes}
        for chapter in (CH02, CH03):
            write_notebook(filled_notebook(chapter, overrides), folder / student / f"{chapter}.ipynb")
    return sum(len(tasks_of(c)) for c in (CH02, CH03)) * len(MISTAKES)


def command(subs, out):
    return [sys.executable, "-m", "grader", "grade", str(subs), "--out", str(out), "--quiet",
            "--jobs", "2", "--seed", str(SEED), "--device", "cpu"]


def read_lines(out):
    path = out / "results.jsonl"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def valid_records(lines):
    """{(submission, task): line} of the lines that parse; asserts there is no duplicate."""
    found = {}
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        key = (record["submission"], record["task"])
        assert key not in found, f"graded twice: {key}"
        found[key] = line
    return found


class Run:
    """One `python -m grader grade` process, in its own process group."""

    def __init__(self, subs, out, log):
        self.start = time.monotonic()
        self.log = open(log, "ab")
        self.process = subprocess.Popen(command(subs, out), cwd=REPO, stdout=self.log, stderr=self.log,
                                        start_new_session=True)

    def elapsed(self):
        return time.monotonic() - self.start

    def alive(self):
        return self.process.poll() is None

    def kill(self):
        """SIGKILL the grader's process group, then every process it had started (the worker
        hosts run in sessions of their own). True if the grader was still running."""
        hosts = processes.descendants(self.process.pid)
        alive = self.alive()
        for target in [lambda: os.killpg(self.process.pid, signal.SIGKILL)] + [
                (lambda pid=pid: os.kill(pid, signal.SIGKILL)) for pid in hosts]:
            try:
                target()
            except (ProcessLookupError, PermissionError):
                pass
        self.process.wait(30)
        self.log.close()
        return alive

    def finish(self):
        code = self.process.wait(300)
        self.log.close()
        return code


def wait_until(condition, run, timeout=120.0, poll=0.002):
    """Poll until condition() or the run ends; True if the condition came first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        if not run.alive():
            return condition()
        time.sleep(poll)
    raise AssertionError("the grader neither progressed nor ended")


def grades_by_task(out):
    records = json.loads((out / "grades.json").read_text())
    return {(r["submission"], r["task"]): (r["points"], r["max_points"], r["status"], r["feedback"], r["notes"])
            for r in records}


def records_written(lines):
    """How many records these lines hold, whether or not a resume can read them (a record
    appended to a half-written line is in the file, glued to it): every record has one
    duration_s, a cut-off line has none (the one this test plants) or one."""
    return sum(line.count('"duration_s": ') for line in lines)


@pytest.mark.slow
def test_a_batch_killed_at_random_moments_loses_no_grade_and_grades_nothing_twice(tmp_path):
    subs, out, reference_out = tmp_path / "subs", tmp_path / "out", tmp_path / "reference"
    total = build_class(subs)
    rng = random.Random(SEED)

    # One uninterrupted run: the grades to reach, and the timings the kills are spread over.
    reference = Run(subs, reference_out, tmp_path / "reference.log")
    wait_until(lambda: len(read_lines(reference_out)) > 0, reference)
    first_result = reference.elapsed()
    wait_until(lambda: len(read_lines(reference_out)) >= total, reference)
    all_results = reference.elapsed()
    assert reference.finish() == 0, (tmp_path / "reference.log").read_text()
    final_writes = reference.elapsed() - all_results  # last result to exit: grade files, hosts closed
    expected = grades_by_task(reference_out)
    assert len(expected) == total

    # Each strategy waits, then the run is killed. Start-up: before the first result (torch
    # being imported, the expectations computed). Mid-way: a random moment of the grading.
    # Writing: right after the k-th new line appears, or a few ms later. Final writes: once
    # results.jsonl holds every task, within the time the reference run took from there to its
    # exit (rewriting results.jsonl, grades.json, grades.csv, feedback/, report.html, run.json).
    def start_up(run, out, before):
        time.sleep(rng.uniform(0.05, 0.9 * first_result))

    def mid_way(run, out, before):
        time.sleep(rng.uniform(first_result, first_result + 0.6 * (all_results - first_result)))

    def while_writing(run, out, before):
        k = rng.randint(1, 4)
        wait_until(lambda: len(read_lines(out)) >= before + k, run)
        time.sleep(rng.choice([0.0, rng.uniform(0.0, 0.02)]))

    def during_final_writes(run, out, before):
        wait_until(lambda: len(valid_records(read_lines(out))) >= total, run)
        time.sleep(rng.uniform(0.0, 0.8 * final_writes))

    seen, gradings, kills, planted = {}, [], [], None  # seen: every record line observed after a kill
    for strategy in (start_up, mid_way, while_writing, during_final_writes):
        before_lines = read_lines(out)
        run = Run(subs, out, tmp_path / "runs.log")
        strategy(run, out, len(before_lines))
        grades_written = (out / "grades.json").exists()
        killed = run.kill()
        kills.append((strategy.__name__, killed, round(run.elapsed(), 2), grades_written))
        lines = read_lines(out)
        records = valid_records(lines)  # never a duplicate, at any moment
        # Nothing written before is lost or changed (the final rewrite may reorder the lines).
        assert all(records.get(key) == line for key, line in seen.items()), f"lost or changed after {kills[-1]}"
        # What came after the half-written line is on lines of its own, not glued to it.
        assert planted is None or not any(line.startswith(planted) and line != planted for line in lines)
        seen.update(records)
        # A task in flight at a kill has no line yet: it is graded once, after the restart.
        gradings.append(records_written(lines) - records_written(before_lines))
        if strategy is mid_way and len(records) < total:
            # A half-written last line (a kill inside a write, a full disk): the record of a task
            # not graded yet, cut in the middle. The next runs must skip it, grade that task, and
            # write their own records on lines of their own.
            missing = sorted(set(expected) - set(records))[0]
            line = json.dumps({"submission": missing[0], "task": missing[1], "seed": SEED, "device": "cpu",
                               "notes": [], "status": "passed", "feedback": "x" * 60})
            planted = line[: len(line) // 2]
            with open(out / "results.jsonl", "a", encoding="utf-8") as f:
                f.write(planted)

    # Like a kill inside a write of grades.json or of a feedback file: stale temporary files.
    (out / "feedback").mkdir(exist_ok=True)
    (out / ".writing-stale").write_text("[")
    (out / "feedback" / ".writing-stale").write_text("#")

    before_lines = read_lines(out)
    run = Run(subs, out, tmp_path / "runs.log")
    assert run.finish() == 0, (tmp_path / "runs.log").read_text()[-3000:]
    lines = read_lines(out)
    records = valid_records(lines)
    gradings.append(records_written(lines) - records_written(before_lines))  # the rewrite drops nothing

    assert sum(killed for _, killed, _, _ in kills) >= 3, kills  # the kills did interrupt runs
    assert len(lines) == len(records) == total  # one line per (submission, task), and every line parses
    assert set(records) == set(expected)
    assert all(records[key] == line for key, line in seen.items())  # unchanged since first written
    assert sum(gradings) == total, (gradings, kills)  # every task graded exactly once
    assert grades_by_task(out) == expected
    assert (out / "grades.csv").read_text() == (reference_out / "grades.csv").read_text()
    leftovers = sorted(out.rglob(".writing-*"))
    assert not leftovers, leftovers
    assert json.loads((out / "run.json").read_text())["seed"] == SEED
    assert (out / "report.html").stat().st_size > 0
    assert {p.stem for p in (out / "feedback").glob("*.md")} == set(MISTAKES)
    print(f"uninterrupted run: first result {first_result:.1f} s, all {all_results:.1f} s, "
          f"exit {all_results + final_writes:.1f} s; "
          f"killed runs (strategy, interrupted, seconds, grades.json there): {kills}, then one to the end; "
          f"tasks graded per run: {gradings}")
