"""Pushing the course grader's points into an nbgrader gradebook (grader/nbgrading/push.py).

One temporary course directory and sqlite gradebook: the first push runs nbgrader's
generate_assignment there (the gradebook does not exist yet), then every check cell's
auto_score must equal grades.json's points; a second push changes nothing; a student the
grader never saw, and manual scores, are left alone; a changed grade is updated alone.
"""
import json
import shutil
import sqlite3
import warnings

import pytest

from grader.nbgrading import push as nbgrader_push

pytestmark = pytest.mark.slow  # runs nbgrader generate_assignment once

CH2 = "02_attention"
POINTS = {"2.1": 2, "2.2": 2, "2.3": 2, "2.4": 3, "2.5": 4, "3.1": 3, "3.2": 4}


def record(submission, task, points=None):
    maximum = POINTS[task]
    points = maximum if points is None else points
    return {"submission": submission, "notebook": f"{CH2}.ipynb", "notebook_sha": "0" * 64, "chapter": CH2,
            "task": task, "names": ["x"], "level": "B", "max_points": maximum, "seed": 1, "device": "cpu",
            "notes": [], "status": "passed" if points == maximum else "failed", "points": points,
            "feedback": "", "duration_s": 0.5}


def write_grades(folder, wrong_2_4_for_bob=True):
    records = [record("alice", t) for t in ("2.1", "2.2", "2.3", "2.4", "2.5")]
    records += [record("bob", t, 0 if (t == "2.4" and wrong_2_4_for_bob) else None)
                for t in ("2.1", "2.2", "2.3", "2.4", "2.5")]
    records += [record("alice", "3.1")]  # another chapter: not part of the assignment
    folder.mkdir(exist_ok=True)
    (folder / "grades.json").write_text(json.dumps(records))
    return records


def gradebook(url):
    from nbgrader.api import Gradebook

    return Gradebook(url, course_id="")


def check_scores(url, student):
    with gradebook(url) as gb:
        submission = gb.find_submission(CH2, student)
        return {g.name: (g.auto_score, g.manual_score, g.score) for nb in submission.notebooks for g in nb.grades
                if g.name.startswith("check_")}, submission.score


def snapshot(db_file):
    """Every row of the gradebook's student, submission and grade tables."""
    with sqlite3.connect(db_file) as connection:
        return {table: sorted(map(repr, connection.execute(f"SELECT * FROM {table}").fetchall()))
                for table in ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")}


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    root = tmp_path_factory.mktemp("push")
    course, grades = root / "course", root / "grades"
    records = write_grades(grades)
    db_file = course / "gradebook.db"
    url = f"sqlite:///{db_file}"
    # Without --course-dir, a missing gradebook is an error, and no empty one is left behind.
    with pytest.raises(nbgrader_push.PushError, match="generate_assignment"):
        nbgrader_push.push(str(grades), url, CH2)
    assert not db_file.exists()
    first = nbgrader_push.push(str(grades), url, CH2, course_dir=str(course))
    return {"root": root, "course": course, "grades": grades, "url": url, "db": db_file, "records": records,
            "first": first}


def test_first_push_creates_students_submissions_and_auto_scores(pushed):
    first = pushed["first"]
    assert first["notebooks"] == {CH2: CH2}
    assert first["students_created"] == ["alice", "bob"] and first["submissions_created"] == ["alice", "bob"]
    assert first["not_pushed_chapters"] == ["03_multihead_attention"]
    assert (pushed["course"] / "source" / CH2 / f"{CH2}.ipynb").exists()  # the master, for generate_assignment
    for student in ("alice", "bob"):
        scores, total = check_scores(pushed["url"], student)
        expected = {f"check_{r['task'].replace('.', '_')}": r["points"] for r in pushed["records"]
                    if r["submission"] == student and r["chapter"] == CH2 and r["task"].startswith("2.")}
        assert {name: auto for name, (auto, _, _) in scores.items()} == expected
        assert {name: score for name, (_, _, score) in scores.items()} == expected
        assert total == sum(expected.values())


def test_second_push_changes_nothing_and_leaves_others_alone(pushed):
    url = pushed["url"]
    with gradebook(url) as gb:
        # A student the course grader never graded, and a grader's manual score for alice.
        gb.add_student("zoe")
        with warnings.catch_warnings():  # nbgrader's add_submission warns of its own autoflush
            warnings.simplefilter("ignore")
            gb.add_submission(CH2, "zoe")
        zoe = gb.find_grade("check_2_1", CH2, CH2, "zoe")
        zoe.auto_score, zoe.manual_score = 1.0, 2.0
        alice = gb.find_grade("check_2_1", CH2, CH2, "alice")
        alice.manual_score, alice.needs_manual_grade = 1.5, False
        gb.db.commit()
    before = snapshot(pushed["db"])
    again = nbgrader_push.push(str(pushed["grades"]), url, CH2)
    assert again["changed"] == [] and again["students_created"] == [] and again["submissions_created"] == []
    assert snapshot(pushed["db"]) == before

    # A regraded task (bob's 2.4 now right): only that grade changes.
    write_grades(pushed["grades"], wrong_2_4_for_bob=False)
    third = nbgrader_push.push(str(pushed["grades"]), url, CH2)
    assert third["changed"] == [("bob", "2.4", 0.0, 3.0)]
    after = snapshot(pushed["db"])
    assert len(set(before["grade"]) ^ set(after["grade"])) == 2  # one row out, its update in
    assert check_scores(url, "zoe")[0]["check_2_1"] == (1.0, 2.0, 2.0)
    assert check_scores(url, "alice")[0]["check_2_1"] == (2.0, 1.5, 1.5)  # manual score kept, and it counts


def test_a_gradebook_from_another_master_is_refused(pushed):
    copy = pushed["root"] / "other.db"
    shutil.copy(pushed["db"], copy)
    with sqlite3.connect(copy) as connection:
        connection.execute("UPDATE grade_cells SET max_score = 5 WHERE id IN "
                           "(SELECT id FROM base_cell WHERE name = 'check_2_4')")
    with pytest.raises(nbgrader_push.PushError, match="check_2_4 is worth 5 points there, 3 for the grader"):
        nbgrader_push.push(str(pushed["grades"]), f"sqlite:///{copy}", CH2)


def test_assignment_names_that_say_their_chapter():
    assert nbgrader_push.chapter_of_name("02_attention") == CH2
    assert nbgrader_push.chapter_of_name("ch03-heads") == "03_multihead_attention"
    assert nbgrader_push.chapter_of_name("homework 1") is None


def test_a_late_penalty_goes_to_the_notebook_and_the_cells_keep_the_tests_points(pushed, tmp_path):
    """As nbgrader's own autograde with the course's policy (grader/nbgrading/late.py) keeps it."""
    from grader.grading import policy as late_policy
    from grader.outputs import late

    records = write_grades(pushed["grades"])
    (tmp_path / "policy.toml").write_text('[penalty]\nper_day = 0.25\n[chapters.02_attention]\ndue = 2026-10-05T23:59:00\n')
    setting = late.Setting(late_policy.read_policy(tmp_path / "policy.toml"))
    times = {"bob": {CH2: {"timestamp": "2026-10-06T08:00:00+00:00", "file_time": None}}}
    (pushed["grades"] / "grades.json").write_text(json.dumps(late.apply(records, setting, times)))
    summary = nbgrader_push.push(str(pushed["grades"]), pushed["url"], CH2)
    assert summary["late_penalties"] == {"bob": 2.5}  # a quarter of his 10 points
    scores, total = check_scores(pushed["url"], "bob")
    assert scores["check_2_4"][0] == 0.0 and scores["check_2_5"][0] == 4.0  # the tests' points, not 3.0
    with gradebook(pushed["url"]) as gb:
        assert gb.find_submission_notebook(CH2, CH2, "bob").late_submission_penalty == 2.5
        assert gb.find_submission_notebook(CH2, CH2, "alice").late_submission_penalty is None
    # Without the policy the penalty goes again.
    write_grades(pushed["grades"])
    assert nbgrader_push.push(str(pushed["grades"]), pushed["url"], CH2)["late_penalties"] == {"bob": None}
