"""A machine problem is the instructor's, never a student's zero (grader/grading/preflight.py).

Offline without the data mirror, a chapter 01 class used to get 0 on every task ("could not
prepare this task (DownloadError ...)") in a run that ended normally, and with an empty cache as
well the command died in a traceback. Now every run checks first what it needs, says in one
message what is missing and how to provide it, exits with status 2 and grades nothing; a task
that cannot be prepared for any submission stops the run instead of writing zeros, and a later
regrade grades it.
"""
import json
import os
import subprocess
import sys

import pytest

from factory import REPO, filled_notebook, records_by_submission, run_grader, write_notebook
from grader.grading import engine, preflight, regrade

CH01, CH02 = "01_text_data", "02_attention"


def offline_environment(tmp_path, mirror=None):
    """No mirror (or the given one), empty caches, and no way out: a proxy on a closed port makes
    every download fail at once, on a machine with internet as well."""
    env = {k: v for k, v in os.environ.items() if k not in ("GPTCOURSE_DATA_MIRROR", "TIKTOKEN_CACHE_DIR")}
    env.update(GPTCOURSE_CACHE_DIR=str(tmp_path / "empty-cache"), https_proxy="http://127.0.0.1:9",
               http_proxy="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    if mirror:
        env["GPTCOURSE_DATA_MIRROR"] = str(mirror)
    return env


def grade_command(paths, out, *extra, env=None):
    command = [sys.executable, "-m", "grader", "grade", *map(str, paths), "--out", str(out), "--quiet",
               "--jobs", "1", *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=600, env=env)


def test_offline_without_data_the_run_stops_with_one_message_and_grades_nothing(tmp_path):
    write_notebook(filled_notebook(CH01), tmp_path / "subs" / "alice" / f"{CH01}.ipynb")
    result = grade_command([tmp_path / "subs"], tmp_path / "out", env=offline_environment(tmp_path))

    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    message = result.stderr
    assert message.startswith("error: cannot grade"), message
    for needed in ("'the-verdict'", "'gpt2-encoder'", "'gpt2-vocab'", "01_text_data", "GPTCOURSE_DATA_MIRROR"):
        assert needed in message, (needed, message)
    for written in ("grades.csv", "grades.json", "results.jsonl"):
        assert not (tmp_path / "out" / written).exists()


def test_a_mirror_missing_one_file_names_that_file_only(tmp_path, mirror_dir):
    partial = tmp_path / "mirror"
    (partial / "gpt2").mkdir(parents=True)
    for name in ("gpt2/encoder.json", "gpt2/vocab.bpe"):
        (partial / name).symlink_to(mirror_dir / name)
    write_notebook(filled_notebook(CH01), tmp_path / "subs" / "alice" / f"{CH01}.ipynb")
    result = grade_command([tmp_path / "subs"], tmp_path / "out", env=offline_environment(tmp_path, partial))

    assert result.returncode == 2
    assert "'the-verdict'" in result.stderr and "the-verdict.txt" in result.stderr
    assert "gpt2-encoder" not in result.stderr and "gpt2-vocab" not in result.stderr


def test_a_chapter_that_reads_no_data_is_graded_offline(tmp_path):
    write_notebook(filled_notebook(CH02), tmp_path / "subs" / "alice" / f"{CH02}.ipynb")
    result = grade_command([tmp_path / "subs"], tmp_path / "out", "--seed", "3",
                           env=offline_environment(tmp_path))
    assert result.returncode == 0, result.stderr
    records = json.loads((tmp_path / "out" / "grades.json").read_text())
    assert records and all(r["status"] == "passed" for r in records)


def test_every_option_the_machine_cannot_serve_is_named_in_one_message(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    env = offline_environment(tmp_path)
    env["PATH"] = str(tmp_path / "empty-bin")  # no bubblewrap to be found
    extra = ["--sandbox", "bwrap"] + (["--device", "cuda"] if not _cuda() else [])
    result = subprocess.run([sys.executable, "-m", "grader", "grade", str(tmp_path), "--out", str(blocked / "out"),
                             *extra], capture_output=True, text=True, cwd=REPO, timeout=300, env=env)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("error:") == 1
    assert "output folder" in result.stderr and "--sandbox bwrap" in result.stderr
    assert "bubblewrap" in result.stderr
    if not _cuda():
        assert "--device cuda" in result.stderr


def _cuda():
    import torch

    return torch.cuda.is_available()


def test_machine_problems_one_by_one(tmp_path, monkeypatch):
    import torch

    from grader.grading import sandbox

    assert preflight.machine_problems(tmp_path / "out", "cpu", "none") == []
    assert (tmp_path / "out").is_dir() and not list((tmp_path / "out").iterdir())  # the probe file is gone
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert "no CUDA GPU" in " ".join(preflight.machine_problems(tmp_path, "cuda", "none"))
    assert preflight.machine_problems(tmp_path, "auto", "none") == []  # auto: the CPU when there is no GPU
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
    assert "--sandbox bwrap: bubblewrap (bwrap) is not installed" in " ".join(
        preflight.machine_problems(tmp_path, "cpu", "bwrap"))
    assert preflight.machine_problems(tmp_path, "cpu", "auto") == []  # auto falls back to no sandbox


def test_a_task_that_never_prepares_stops_the_run_and_regrade_grades_it_later(tmp_path, monkeypatch):
    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("alice", "bob"):
        write_notebook(filled_notebook(CH02), subs / name / f"{CH02}.ipynb")
    run_grader([subs], out, "--jobs", "2", "--seed", "5", "--device", "cpu")
    kept = {line for line in (out / "results.jsonl").read_bytes().splitlines() if b'"task": "2.3"' not in line}

    # Task 2.3's cases cannot be made on this machine, for every submission alike.
    real_cases = engine.Expectations.cases

    def broken(self, task_id):
        if task_id == "2.3":
            raise OSError("disk full")
        return real_cases(self, task_id)

    monkeypatch.setattr(engine.Expectations, "cases", broken)
    with pytest.raises(preflight.PreflightError, match=r"task 2\.3 could not be prepared for any of the 2 "
                                                       r"submission\(s\) \(OSError: disk full\)"):
        regrade.regrade(str(out), tasks=["2.3"], progress=False, device="cpu", sandbox="none", jobs=1)
    lines = set((out / "results.jsonl").read_bytes().splitlines())
    assert lines == kept  # no zero written for 2.3, every other record untouched

    monkeypatch.setattr(engine.Expectations, "cases", real_cases)
    _, records, _ = regrade.regrade(str(out), tasks=["2.3"], progress=False, device="cpu", sandbox="none", jobs=1)
    graded = records_by_submission(records)
    assert {graded[name]["2.3"]["status"] for name in ("alice", "bob")} == {"passed"}
    assert kept < set((out / "results.jsonl").read_bytes().splitlines())


def test_one_submission_failing_to_prepare_is_not_a_machine_problem():
    class Task:
        def __init__(self, task_id):
            self.id = task_id

    pending = [(None, None, None, Task("2.3")), (None, None, None, Task("2.3")), (None, None, None, Task("2.4"))]
    engine._stop_on_tasks_that_never_prepare({"2.3": ["ValueError: odd notebook"]}, pending)  # 1 of 2: no stop
    engine._stop_on_tasks_that_never_prepare({"2.3": ["A: x", "A: y"]}, pending)  # not the same error: no stop
    with pytest.raises(preflight.PreflightError, match="task 2.4"):
        engine._stop_on_tasks_that_never_prepare({"2.4": ["A: x"]}, pending)


@pytest.mark.parametrize("chapter", ["01_text_data", "05_pretraining", "09_instruction"])
def test_the_declared_data_is_all_that_grading_reads(tmp_path, mirror_dir, chapter):
    """A chapter graded with a mirror that holds exactly its GRADING_DATA: nothing else is needed
    (the tokenizer's files included), so the preflight's list is complete."""
    from gptcourse import data
    from gptcourse.checking.tasks import chapter_module

    partial = tmp_path / "mirror"
    for name in chapter_module(chapter).GRADING_DATA:
        target = partial / data.DATASETS[name].filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(mirror_dir / data.DATASETS[name].filename)
    partial.mkdir(exist_ok=True)
    write_notebook(filled_notebook(chapter), tmp_path / "subs" / "alice" / f"{chapter}.ipynb")
    result = grade_command([tmp_path / "subs"], tmp_path / "out", "--seed", "9", "--device", "cpu",
                           env=offline_environment(tmp_path, partial))
    assert result.returncode == 0, result.stderr
    records = json.loads((tmp_path / "out" / "grades.json").read_text())
    assert records and all(r["status"] == "passed" for r in records), [r["feedback"] for r in records]
