"""Regrading without touching the others: `python -m grader regrade` (grader/grading/regrade.py).

A real grade run of chapter 02 (alice and carol right, bob with a wrong Task 2.4), then, each
on its own copy of the output folder: bob's notebook replaced by a corrected one and bob
regraded; Task 2.4 regraded for everyone; everything regraded. The records that were not
selected must stay byte for byte in results.jsonl (and keep their duration), the selected
ones must really be graded again (a marker written into their duration disappears).
"""
import json
import shutil
import subprocess
import sys

import pytest

from factory import REPO, corpus_items, filled_notebook, records_by_submission, run_grader, write_notebook

CH02 = "02_attention"
MARK = 4242.5  # a duration no real task takes: kept records keep it, regraded ones lose it


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("regrade")
    subs, out = root / "subs", root / "out"
    wrong = next(i for i in corpus_items() if i.id == "2.4__wrong_fill_zero")
    write_notebook(filled_notebook(CH02), subs / "alice" / f"{CH02}.ipynb")
    write_notebook(filled_notebook(CH02, {"2.4": wrong.source}), subs / "bob" / f"{CH02}.ipynb")
    write_notebook(filled_notebook(CH02), subs / "carol" / f"{CH02}.ipynb")
    records = run_grader([subs], out, "--jobs", "2", "--seed", "11", "--device", "cpu")
    return {"root": root, "subs": subs, "out": out, "records": records}


def copy_of(graded, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(graded["out"], out)
    return out


def regrade(out, *args, ok=True):
    command = [sys.executable, "-m", "grader", "regrade", str(out), *map(str, args), "--jobs", "2", "--quiet"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=1800)
    if ok:
        assert result.returncode == 0, f"regrade failed:\n{result.stdout}\n{result.stderr}"
    return result


def lines(out):
    return (out / "results.jsonl").read_bytes().splitlines(keepends=True)


def mark_durations(out):
    """Give every record the marker duration (a resumed run keeps a record's duration)."""
    marked = []
    for line in lines(out):
        record = json.loads(line)
        record["duration_s"] = MARK
        marked.append((json.dumps(record) + "\n").encode())
    (out / "results.jsonl").write_bytes(b"".join(marked))
    return marked


def by_key(raw_lines):
    return {(r["submission"], r["task"]): line for line, r in ((l, json.loads(l)) for l in raw_lines)}


def test_grade_records_the_paths_and_limits_for_regrade(graded):
    run = json.loads((graded["out"] / "run.json").read_text())
    assert run["paths"] == [str(graded["subs"])]
    assert run["timeout"] == 60.0 and run["memory_mb"] == 2048 and run["seed"] == 11 and run["device"] == "cpu"
    bob = records_by_submission(graded["records"])["bob"]
    assert bob["2.4"]["points"] == 0 and all(r["points"] == r["max_points"] for t, r in bob.items() if t != "2.4")


def test_regrade_one_student_after_a_new_notebook(graded, tmp_path):
    out = copy_of(graded, tmp_path)
    subs = tmp_path / "subs"
    shutil.copytree(graded["subs"], subs)
    write_notebook(filled_notebook(CH02), subs / "bob" / f"{CH02}.ipynb")  # bob fixed his Task 2.4
    before = by_key(lines(out))
    before_json = json.loads((out / "grades.json").read_text())

    result = regrade(out, subs, "--student", "bob")  # PATH given: the copy, not the recorded path
    assert "removed 5 record(s)" in result.stdout and "bob: 2.1, 2.2, 2.3, 2.4, 2.5" in result.stdout
    assert "bob task 2.4: passed 3/3 (was failed 0/3) (new notebook)" in result.stdout

    after = by_key(lines(out))
    assert set(after) == set(before)
    for key, line in before.items():
        if key[0] != "bob":
            assert after[key] == line, key  # byte for byte, duration included
        else:
            assert json.loads(after[key])["notebook_sha"] != json.loads(line)["notebook_sha"]
    graded_now = records_by_submission(json.loads((out / "grades.json").read_text()))
    assert all(r["points"] == r["max_points"] for r in graded_now["bob"].values())
    for record in before_json:
        if record["submission"] != "bob":
            assert graded_now[record["submission"]][record["task"]] == record


def test_regrade_one_task_for_everyone(graded, tmp_path):
    out = copy_of(graded, tmp_path)
    marked = by_key(mark_durations(out))
    result = regrade(out, "--task", "2.4")
    assert "removed 3 record(s)" in result.stdout and "regraded 3 task(s)" in result.stdout
    assert "bob task 2.4: failed 0/3 (unchanged)" in result.stdout
    after = by_key(lines(out))
    assert set(after) == set(marked)
    for key, line in marked.items():
        if key[1] == "2.4":
            assert json.loads(after[key])["duration_s"] != MARK, key  # graded again
            assert json.loads(after[key])["points"] == json.loads(line)["points"]
        else:
            assert after[key] == line, key


def test_regrade_everyone_same_seed_same_points(graded, tmp_path):
    out = copy_of(graded, tmp_path)
    marked = by_key(mark_durations(out))
    result = regrade(out, "--everyone")
    assert "removed 15 record(s)" in result.stdout and "regraded 15 task(s)" in result.stdout
    after = {key: json.loads(line) for key, line in by_key(lines(out)).items()}
    assert set(after) == set(marked)
    assert all(record["duration_s"] != MARK and record["seed"] == 11 for record in after.values())
    assert {k: r["points"] for k, r in after.items()} == {k: json.loads(l)["points"] for k, l in marked.items()}


def test_mistakes_stop_before_anything_is_removed(graded, tmp_path):
    out = copy_of(graded, tmp_path)
    before = lines(out)
    typo = regrade(out, "--student", "bobb", ok=False)
    assert typo.returncode == 2 and "no records of 'bobb'" in typo.stderr and "alice, bob, carol" in typo.stderr
    task = regrade(out, "--task", "2.9", ok=False)
    assert task.returncode == 2 and "unknown task(s) 2.9" in task.stderr
    run = json.loads((out / "run.json").read_text())
    del run["paths"]  # a folder graded before regrade existed
    (out / "run.json").write_text(json.dumps(run))
    old = regrade(out, "--everyone", ok=False)
    assert old.returncode == 2 and "give them after DIR" in old.stderr
    assert lines(out) == before
    never = regrade(tmp_path / "nothing", "--everyone", ok=False)
    assert never.returncode == 2 and "never graded" in never.stderr
