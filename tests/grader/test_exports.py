"""Gradebook exports (grader/outputs/exports.py): Canvas and Moodle grade imports from grades.json.

Golden files for a small class: the headers Canvas and Moodle expect, Canvas's Points
Possible row, roster mapping, empty (not graded) versus 0 (graded, wrong), quoting, the
guard against formulas in names, numbers as the LMSs read them.
"""
import csv
import io
import json
import subprocess
import sys

import pytest

from factory import REPO
from grader.outputs import exports

CH2 = "Chapter 02 — Attention and causal masking"
CH3 = "Chapter 03 — Multi-head attention"
POINTS = {"2.1": 2, "2.2": 2, "2.3": 2, "2.4": 3, "2.5": 4, "3.1": 3, "3.2": 4}


def record(submission, task, points=None, status=None):
    """A task record as grades.json holds it (full points unless told otherwise)."""
    maximum = POINTS[task]
    points = maximum if points is None else points
    return {"submission": submission, "notebook": "nb.ipynb", "notebook_sha": "0" * 64,
            "chapter": "02_attention" if task.startswith("2.") else "03_multihead_attention", "task": task,
            "names": ["x"], "level": "B", "max_points": maximum, "seed": 1, "device": "cpu", "notes": [],
            "status": status or ("passed" if points == maximum else "failed"), "points": points,
            "feedback": "", "duration_s": 0.5}


def chapter2(submission, **points):
    return [record(submission, t, points.get("t" + t.replace(".", "_"))) for t in ("2.1", "2.2", "2.3", "2.4", "2.5")]


@pytest.fixture
def graded(tmp_path):
    """alice: chapter 02 all right and chapter 03 with 3.2 never graded; bob: 2.4 wrong, no
    chapter 03; a student whose name is a formula, with a comma and quotes."""
    records = (chapter2("alice") + [record("alice", "3.1")]
               + chapter2("bob", t2_4=0)
               + chapter2('=HYPERLINK("http://x","y"), z', t2_5=0))
    (tmp_path / "grades.json").write_text(json.dumps(records), encoding="utf-8")
    return tmp_path


def export_text(folder, fmt, roster=None, per="chapter", bom=True):
    out = folder / f"export-{fmt}-{per}.csv"
    exports.export(str(folder), fmt, str(out), str(roster) if roster else None, per, bom)
    return out.read_bytes().decode("utf-8")


def rows_of(text):
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))


def write_roster(folder, text):
    path = folder / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_canvas_golden(graded):
    text = export_text(graded, "canvas")
    assert text == (
        "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section," + CH2 + "," + CH3 + "\r\n"
        "Points Possible,,,,,13,7\r\n"
        + '"\'=HYPERLINK(""http://x"",""y""), z",,,"\'=HYPERLINK(""http://x"",""y""), z",,9,\r\n'
        "alice,,,alice,,13,3\r\n"
        "bob,,,bob,,10,\r\n")


def test_moodle_golden(graded):
    text = export_text(graded, "moodle")
    assert text == (
        "\ufeffUsername," + CH2 + "," + CH3 + "\r\n"
        + '"\'=HYPERLINK(""http://x"",""y""), z",9,-\r\n'
        "alice,13,3\r\n"
        "bob,10,-\r\n")


def test_per_task_columns_in_course_order_with_empty_for_ungraded(graded):
    rows = rows_of(export_text(graded, "canvas", per="task"))
    assert rows[0][5:] == ["Task 2.1 — Self-attention without trainable weights",
                           "Task 2.2 — Self-attention with weight matrices",
                           "Task 2.3 — Self-attention with nn.Linear layers",
                           "Task 2.4 — Causal attention weights", "Task 2.5 — A causal attention module",
                           "Task 3.1 — Multi-head attention by stacking heads",
                           "Task 3.2 — Multi-head attention with split heads"]
    assert rows[1] == ["Points Possible", "", "", "", "", "2", "2", "2", "3", "4", "3", "4"]
    by_student = {row[0]: row[5:] for row in rows[2:]}
    assert by_student["alice"] == ["2", "2", "2", "3", "4", "3", ""]  # 3.2 never graded: empty
    assert by_student["bob"] == ["2", "2", "2", "0", "4", "", ""]  # 2.4 wrong: 0; no chapter 03: empty
    moodle = {row[0]: row[1:] for row in rows_of(export_text(graded, "moodle", per="task"))[1:]}
    assert moodle["bob"] == ["2", "2", "2", "0", "4", "-", "-"]


def test_canvas_roster_fills_identity_columns(graded, capsys):
    roster = write_roster(graded, "Submission,Name,ID,SIS User ID,Login,Section,Email\n"
                                  'alice,"Smith, Alice",101,S-1,asmith,Sec 1,a@uni.edu\n'
                                  "carol,Carol Jones,103,,,Sec 2,c@uni.edu\n"
                                  "bob,Bob Brown,,,,Sec 1,\n")
    rows = rows_of(export_text(graded, "canvas", roster))
    by_student = {row[0]: row for row in rows[2:]}
    assert by_student["Smith, Alice"] == ["Smith, Alice", "101", "S-1", "asmith", "Sec 1", "13", "3"]
    # No id, SIS id or login in the roster: the submission id is the SIS Login ID Canvas matches on.
    assert by_student["Bob Brown"] == ["Bob Brown", "", "", "bob", "Sec 1", "10", ""]
    # A roster student without a submission: a row with empty grades, not zeros.
    assert by_student["Carol Jones"] == ["Carol Jones", "103", "", "", "Sec 2", "", ""]
    # Rows sorted by submission id: the formula student, alice, bob, carol.
    assert [row[0] for row in rows[2:]] == [rows[2][0], "Smith, Alice", "Bob Brown", "Carol Jones"]
    err = capsys.readouterr().err
    assert "not in the roster" in err and '=HYPERLINK' in err
    assert "carol" in err


def test_moodle_identifies_by_email_when_everyone_has_one(graded):
    roster = write_roster(graded, "submission,email,login\nalice,a@uni.edu,asmith\nbob,b@uni.edu,bbrown\n"
                                  '"=HYPERLINK(""http://x"",""y""), z",-z@uni.edu,\n'
                                  "dave,d@uni.edu,dave\n")
    rows = rows_of(export_text(graded, "moodle", roster))
    assert rows[0][0] == "Email address"
    assert rows[1:] == [["'-z@uni.edu", "9", "-"], ["a@uni.edu", "13", "3"], ["b@uni.edu", "10", "-"],
                        ["d@uni.edu", "-", "-"]]


def test_moodle_falls_back_to_usernames_when_an_email_is_missing(graded, capsys):
    roster = write_roster(graded, "submission,email,login\nalice,a@uni.edu,asmith\n")
    rows = rows_of(export_text(graded, "moodle", roster))
    assert rows[0][0] == "Username"
    # Every row has an identifier: Moodle gives a row without one to the student above it.
    assert [row[0] for row in rows[1:]] == ["'=HYPERLINK(\"http://x\",\"y\"), z", "asmith", "bob"]
    assert "Username instead" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_formula_guard(name):
    assert exports.text(name) == "'" + name
    assert exports.text("O'Brien, Ann") == "O'Brien, Ann"


def test_numbers_integers_stay_integers_and_decimals_use_a_dot():
    assert [exports.number(v) for v in (3, 3.0, 2.5, 0, 0.125, None)] == ["3", "3", "2.5", "0", "0.125", None]


def test_no_bom_option(graded):
    assert not export_text(graded, "canvas", bom=False).startswith("\ufeff")
    assert export_text(graded, "canvas").startswith("\ufeff")


def test_non_ascii_round_trips_as_utf8(graded):
    roster = write_roster(graded, "submission,name\nalice,Zoë Ångström-Łukasz\n")
    rows = rows_of(export_text(graded, "canvas", roster))
    assert ["Zoë Ångström-Łukasz", "", "", "alice", "", "13", "3"] in rows


def test_roster_without_submission_column_is_refused(graded):
    roster = write_roster(graded, "name,email\nAlice,a@uni.edu\n")
    with pytest.raises(exports.ExportError, match="no 'submission' column"):
        export_text(graded, "canvas", roster)


def test_command_line(graded):
    out = graded / "canvas.csv"
    result = subprocess.run([sys.executable, "-m", "grader", "export", str(graded), "--format", "canvas",
                             "--out", str(out), "--per", "task"], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert "3 students, 7 grade columns" in result.stdout
    assert rows_of(out.read_text(encoding="utf-8"))[1][0] == "Points Possible"
    missing = subprocess.run([sys.executable, "-m", "grader", "export", str(graded / "nothing"), "--format",
                              "moodle", "--out", str(out)], capture_output=True, text=True, cwd=REPO)
    assert missing.returncode == 2 and "grade first" in missing.stderr
