"""The grading engine: submission layouts, resuming an interrupted batch, outputs, CUDA."""
import json
import shutil
import time
import zipfile

import pytest
import torch

from factory import (corpus_items, filled_notebook, manifest, records_by_submission, release_notebook, run_grader,
                     write_notebook)
from gptcourse.checking.tasks import tasks_of

CH02, CH03 = "02_attention", "03_multihead_attention"


def task_ids(*chapters):
    """The graded tasks of these chapters, from the task table."""
    return sorted(task.id for chapter in chapters for task in tasks_of(chapter))


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    """One correct student in each accepted layout, graded in one run."""
    root = tmp_path_factory.mktemp("layouts")
    course = root / "course"
    write_notebook(filled_notebook(CH02), course / "submitted" / "nb_student" / CH02 / f"{CH02}.ipynb")
    write_notebook(filled_notebook(CH03), course / "submitted" / "nb_student" / CH03 / f"{CH03}.ipynb")
    loose = root / "loose"
    write_notebook(filled_notebook(CH03), loose / "file_student.ipynb")
    folder = write_notebook(filled_notebook(CH02), root / "tmp" / f"{CH02}.ipynb")
    with zipfile.ZipFile(loose / "zip_student.zip", "w") as archive:
        archive.write(folder, f"zip_student/{CH02}.ipynb")
    records = run_grader([course, loose], root / "out", "--jobs", "2", "--seed", "1", "--device", "cpu")
    return records_by_submission(records)


def test_nbgrader_layout_one_submission_per_student_with_both_chapters(layouts):
    assert sorted(layouts["nb_student"]) == task_ids(CH02, CH03)
    assert all(r["status"] == "passed" for r in layouts["nb_student"].values())


def test_loose_notebook_and_zip_are_submissions(layouts):
    assert sorted(layouts["file_student"]) == task_ids(CH03)  # chapter found from the content
    assert sorted(layouts["zip_student"]) == task_ids(CH02)
    assert all(r["points"] == r["max_points"] for s in ("file_student", "zip_student") for r in layouts[s].values())


def test_points_come_from_the_check_cells_metadata(layouts):
    points = {t: r["max_points"] for t, r in layouts["nb_student"].items()}
    release = {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"].get("points")
               for ch in (CH02, CH03) for c in release_notebook(ch)["cells"] if "nbgrader" in c["metadata"]}
    assert points == {t: release[f"check_{t.replace('.', '_')}"] for t in points}


def test_untouched_release_gets_zero_with_not_implemented(tmp_path):
    write_notebook(release_notebook(CH02), tmp_path / "subs" / "lazy" / f"{CH02}.ipynb")
    records = run_grader([tmp_path / "subs"], tmp_path / "out", "--seed", "1", "--device", "cpu")
    assert all(r["points"] == 0 and "not implemented yet" in r["feedback"] for r in records)


def test_an_interrupted_batch_resumes_without_regrading(tmp_path):
    subs = tmp_path / "subs"
    wrong = next(i for i in corpus_items() if i.id == "2.4__wrong_fill_zero")
    write_notebook(filled_notebook(CH02), subs / "a" / f"{CH02}.ipynb")
    write_notebook(filled_notebook(CH02, {"2.4": wrong.source}), subs / "b" / f"{CH02}.ipynb")
    out = tmp_path / "out"
    first = run_grader([subs], out, "--device", "cpu")
    results = (out / "results.jsonl").read_text().splitlines()
    assert len(results) == 10
    # Simulate an interruption after 7 tasks: the last 3 results never got written.
    (out / "results.jsonl").write_text("\n".join(results[:7]) + "\n")
    kept = [json.loads(line) for line in results[:7]]
    second = run_grader([subs], out, "--device", "cpu")  # same seed: it is kept in run.json
    after = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(after) == 10 and after[:7] == kept  # only the 3 missing tasks were graded again
    strip = lambda records: sorted((r["submission"], r["task"], r["points"], r["status"]) for r in records)  # noqa: E731
    assert strip(first) == strip(second)
    assert json.loads((out / "run.json").read_text())["seed"] == first[0]["seed"]


def test_grades_csv_has_one_row_per_submission_with_totals(tmp_path):
    subs = tmp_path / "subs"
    write_notebook(filled_notebook(CH03), subs / "x" / f"{CH03}.ipynb")
    run_grader([subs], tmp_path / "out", "--seed", "3", "--device", "cpu")
    lines = (tmp_path / "out" / "grades.csv").read_text().splitlines()
    assert lines[0] == "submission,points,max_points,task 3.1,task 3.2"
    assert lines[1] == "x,7,7,3,4"


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_grading_catches_a_mask_created_on_the_cpu(tmp_path):
    items = {i.id: i for i in corpus_items()}
    subs = tmp_path / "subs"
    write_notebook(filled_notebook(CH02), subs / "right" / f"{CH02}.ipynb")
    write_notebook(filled_notebook(CH02, {"2.5": items["2.5__cudaonly_mask_on_cpu"].source}),
                   subs / "cpu_mask" / f"{CH02}.ipynb")
    graded = records_by_submission(run_grader([subs], tmp_path / "out", "--device", "cuda"))
    assert all(r["status"] == "passed" for r in graded["right"].values())
    record = graded["cpu_mask"]["2.5"]
    # The device pass on 'meta' runs before the CUDA run and reports the mask first.
    assert record["points"] == 0 and "device" in record["feedback"]
    assert "[cuda]" in record["feedback"] or "[meta]" in record["feedback"]


def test_each_record_times_its_own_task_not_the_batch_so_far(tmp_path):
    """duration_s is what the class report ranks "slowest tasks" by: it must be the task's own
    time. One slow task (2.1 sleeps 2 s) and one worker: a later task must not inherit its time,
    and with one worker the tasks' times cannot add up to more than the whole run took."""
    slow_2_1 = manifest()[CH02]["tasks"]["2.1"]["source"] + "\nimport time\ntime.sleep(2.0)\n"
    write_notebook(filled_notebook(CH02, {"2.1": slow_2_1}), tmp_path / "subs" / "slow" / f"{CH02}.ipynb")
    started = time.monotonic()
    records = run_grader([tmp_path / "subs"], tmp_path / "out", "--device", "cpu", "--jobs", "1")
    wall = time.monotonic() - started
    seconds = {r["task"]: r["duration_s"] for r in records}
    assert all(r["status"] == "passed" for r in records), records
    assert seconds["2.1"] >= 2.0, seconds
    assert max(s for task, s in seconds.items() if task != "2.1") < 2.0, seconds
    assert sum(seconds.values()) <= wall, (seconds, wall)


def test_the_grading_process_computes_expectations_with_one_torch_thread(tmp_path, monkeypatch):
    """The expected observations are computed while the workers run: with a torch thread per
    core they fought the workers for the cores (43 s instead of 2 s on a busy machine). They use
    one thread, as the workers do, and the caller's setting is restored afterwards."""
    from grader.grading import engine

    threads_seen = []
    expected = engine.Expectations.expected

    def recording(self, task_id):
        threads_seen.append(torch.get_num_threads())
        return expected(self, task_id)

    monkeypatch.setattr(engine.Expectations, "expected", recording)
    write_notebook(filled_notebook(CH03), tmp_path / "subs" / "a" / f"{CH03}.ipynb")
    threads_before = torch.get_num_threads()
    torch.set_num_threads(2)  # as torch starts on a 2-core machine; the test must not pass on 1
    try:
        records = engine.grade([str(tmp_path / "subs")], engine.Settings(out_dir=str(tmp_path / "out"), device="cpu",
                                                                         jobs=1, progress=False))
        assert torch.get_num_threads() == 2  # the caller's setting is back
    finally:
        torch.set_num_threads(threads_before)
    assert [r["status"] for r in records] == ["passed", "passed"]
    assert threads_seen and set(threads_seen) == {1}, threads_seen
