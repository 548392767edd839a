"""Due dates, extensions, late tokens and penalties (grader/grading/policy.py, grader/outputs/late.py).

The decisions are checked on the policy's own functions, then through `apply-policy` on a grade
folder: what grades.json, grades.csv and the feedback say, and that applying again never counts
a penalty or a token twice.
"""
import csv
import io
import json
import textwrap

import pytest

from grader.__main__ import main
from grader.grading import policy as late_policy
from grader.outputs import late

BERLIN = "Europe/Berlin"
CH2, CH3, CH4 = "02_attention", "03_multihead_attention", "04_gpt_model"


def policy(text, folder=None, files=None):
    """The Policy of a policy file's text (its extension files written into `folder`)."""
    for name, content in (files or {}).items():
        (folder / name).write_text(content, encoding="utf-8")
    data = late_policy.tomllib.loads(textwrap.dedent(text))
    return late_policy.policy_from(data, str(folder) if folder else ".", "policy.toml")


def at(text, zone=BERLIN):
    return late_policy.parse_moment(text, late_policy.ZoneInfo(zone))


# Chapter 02 is due on the Saturday before the clocks go back in Berlin (Sunday 2026-10-25, 03:00
# CEST becomes 02:00 CET): that Sunday has 25 hours.
AUTUMN = """
    timezone = "Europe/Berlin"
    [penalty]
    per_day = 0.1
    [chapters.02_attention]
    due = 2026-10-24T23:59:00
    last = 2026-10-28T23:59:00
"""


def decided(text, student, times, folder=None, files=None):
    return late_policy.decide(policy(text, folder, files), student, {c: at(t) for c, t in times.items()})


@pytest.mark.parametrize("submitted, days, share", [
    ("2026-10-24 23:59:00", 0, 0.0),       # at the due date, to the second: on time
    ("2026-10-24 23:59:01", 1, 0.1),       # one second after it: one started day
    ("2026-10-25 23:59:00", 1, 0.1),       # 25 hours later, the same clock time: still one day
    ("2026-10-25 23:59:01", 2, 0.2),
    ("2026-10-28 23:59:00", 4, 0.4),       # at the last date: the penalty of its day
    ("2026-10-28 23:59:01", 5, 1.0),       # after it: nothing
])
def test_days_are_counted_on_the_policys_wall_clock_and_nothing_counts_after_the_last_date(submitted, days, share):
    lateness = decided(AUTUMN, "amy", {CH2: submitted})[CH2]
    assert (lateness.days_late, lateness.share, lateness.after_last) == (days, share, share == 1.0)


def test_a_spring_day_of_23_hours_is_one_day_too():
    spring = AUTUMN.replace("2026-10-24T23:59:00", "2026-03-28T23:59:00").replace("2026-10-28", "2026-04-02")
    # 2026-03-29 has 23 hours in Berlin: 23:59 on the Sunday is 23 hours after the due date.
    assert decided(spring, "amy", {CH2: "2026-03-29 23:59:00"})[CH2].days_late == 1
    assert decided(spring, "amy", {CH2: "2026-03-29 23:59:01"})[CH2].days_late == 2
    # The same instant written in UTC is the same lateness.
    utc = late_policy.decide(policy(spring), "amy", {CH2: at("2026-03-29T21:59:01+00:00")})
    assert utc[CH2].days_late == 2


def test_nbgraders_timestamp_is_utc_and_a_grace_period_counts_as_on_time(tmp_path):
    stamp = tmp_path / "timestamp.txt"
    stamp.write_text("2026-10-24 22:03:00.123456 UTC")  # 00:03 in Berlin: 4 minutes late
    submitted = late_policy.read_timestamp_file(stamp)
    plain = late_policy.decide(policy(AUTUMN), "amy", {CH2: submitted})[CH2]
    graced = late_policy.decide(policy(AUTUMN.replace("per_day = 0.1", "per_day = 0.1\ngrace_minutes = 5")),
                                "amy", {CH2: submitted})[CH2]
    assert (plain.days_late, graced.days_late) == (1, 0)
    assert late_policy.read_timestamp_file(tmp_path / "none.txt") is None


def test_an_extension_moves_the_due_date_and_the_last_date_with_it(tmp_path):
    text = AUTUMN + '[extensions]\nfile = "extensions.csv"\n'
    files = {"extensions.csv": "student,chapter,due\nbob,02,2026-10-26 23:59\n"}
    bob = decided(text, "bob", {CH2: "2026-10-26 23:00"}, tmp_path, files)[CH2]
    assert (bob.days_late, bob.share, bob.extension) == (0, 0.0, at("2026-10-26 23:59"))
    # Two days after his new due date, past the class's last date: two days late, not zero.
    bob = decided(text, "bob", {CH2: "2026-10-29 10:00"}, tmp_path, files)[CH2]
    assert (bob.days_late, bob.after_last, bob.share) == (3, False, 0.3)
    assert decided(text, "amy", {CH2: "2026-10-26 23:00"}, tmp_path, files)[CH2].days_late == 2


TERM = AUTUMN + """
    [tokens]
    per_student = 2
    [chapters.03_multihead_attention]
    due = 2026-11-07T23:59:00
    last = 2026-11-09T23:59:00
    [chapters.04_gpt_model]
    due = 2026-11-14T23:59:00
"""


def test_tokens_go_to_the_earliest_late_chapters_as_many_as_help_and_never_twice():
    # One day late in 02 and in 04, three days late in 03: two tokens waive 02's day and one of 03's.
    chapters = decided(TERM, "amy", {CH4: "2026-11-15 12:00", CH3: "2026-11-10 12:00", CH2: "2026-10-25 12:00"})
    assert {c: (d.tokens, d.days_late) for c, d in chapters.items()} == {CH2: (1, 0), CH3: (1, 2), CH4: (0, 1)}
    assert sum(d.tokens for d in chapters.values()) == 2
    # Three days late in 03 is past its last date: the token that brings it back is spent there.
    assert chapters[CH3].after_last is False and chapters[CH3].share == 0.2


def test_no_token_is_spent_where_it_changes_nothing():
    # 02 four days past its last date: two tokens cannot bring it back, so both go to 04.
    chapters = decided(TERM, "amy", {CH2: "2026-11-01 12:00", CH4: "2026-11-16 12:00"})
    assert (chapters[CH2].tokens, chapters[CH2].share) == (0, 1.0)
    assert (chapters[CH4].tokens, chapters[CH4].days_late) == (2, 0)
    # On time everywhere: no token is spent.
    assert all(d.tokens == 0 for d in decided(TERM, "amy", {CH2: "2026-10-20 12:00"}).values())


@pytest.mark.parametrize("text, complaint", [
    (AUTUMN.replace("02_attention", "02_attentions"), "not a chapter of the course"),
    (AUTUMN.replace('"Europe/Berlin"', '"Mars/Olympus"'), "not a time zone name"),
    (AUTUMN.replace("per_day = 0.1", "per_day = 10"), "outside 0 to 1"),
    (AUTUMN.replace("last = 2026-10-28", "last = 2026-10-20"), "is before the due date"),
    (AUTUMN.replace("per_day", "per_days"), "unknown setting per_days"),
    (AUTUMN.replace("due = 2026-10-24T23:59:00", ""), "no due date"),
])
def test_a_policy_mistake_is_one_message_that_says_where(text, complaint):
    with pytest.raises(late_policy.PolicyError, match=complaint):
        policy(text)


def test_a_second_extension_of_the_same_student_and_chapter_is_refused(tmp_path):
    files = {"extensions.csv": "student,chapter,due\nbob,02,2026-10-26 23:59\nbob,02_attention,2026-10-27 23:59\n"}
    with pytest.raises(late_policy.PolicyError, match="line 3: a second extension for bob"):
        policy(AUTUMN + '[extensions]\nfile = "extensions.csv"\n', tmp_path, files)


# ------------------------------------------------------------------------------------------
# apply-policy on a grade folder
# ------------------------------------------------------------------------------------------

POINTS = {"2.1": 2, "2.2": 2, "2.3": 2, "2.4": 3, "2.5": 4, "3.1": 3, "3.2": 4}


def record(submission, task, points=None):
    maximum = POINTS[task]
    points = maximum if points is None else points
    return {"submission": submission, "notebook": "nb.ipynb", "notebook_sha": "0" * 64,
            "chapter": CH2 if task.startswith("2.") else CH3, "task": task, "names": ["x"], "level": "B",
            "max_points": maximum, "seed": 1, "device": "cpu", "notes": [],
            "status": "passed" if points == maximum else "failed", "points": points, "feedback": "", "duration_s": 0.5}


def stamp(text):
    return at(text).isoformat()


@pytest.fixture
def folder(tmp_path):
    """A graded folder: amy on time, bob a day late in 02 (he loses 2.4 too), carol's time unknown."""
    out = tmp_path / "grades"
    out.mkdir()
    records = ([record("amy", t) for t in POINTS] + [record("bob", t, 0 if t == "2.4" else None) for t in POINTS]
               + [record("carol", t) for t in POINTS if t.startswith("2.")])
    (out / "grades.json").write_text(json.dumps(records))
    (out / "run.json").write_text(json.dumps({"seed": 1, "device": "cpu"}))
    times = {"amy": {CH2: {"timestamp": stamp("2026-10-24 20:00"), "file_time": None},
                     CH3: {"timestamp": stamp("2026-11-07 20:00"), "file_time": None}},
             "bob": {CH2: {"timestamp": stamp("2026-10-25 09:00"), "file_time": stamp("2026-10-20 09:00")},
                     CH3: {"timestamp": stamp("2026-11-07 20:00"), "file_time": None}},
             "carol": {CH2: {"timestamp": None, "file_time": stamp("2026-10-27 09:00")}}}
    (out / "times.json").write_text(json.dumps(times))
    (tmp_path / "policy.toml").write_text(textwrap.dedent(TERM.replace("per_student = 2", "per_student = 0")))
    return out


def apply_policy(capsys, out, *options):
    status = main(["apply-policy", str(out), *options])
    said = capsys.readouterr()
    assert status == 0, said.err
    return json.loads((out / "grades.json").read_text())


def by(records, submission, chapter=None):
    return [r for r in records if r["submission"] == submission and (chapter is None or r["chapter"] == chapter)]


def test_raw_points_and_penalty_are_both_kept_and_points_are_what_is_left(capsys, folder):
    records = apply_policy(capsys, folder, "--policy", str(folder.parent / "policy.toml"))
    bob = by(records, "bob", CH2)
    assert sum(r["raw_points"] for r in bob) == 10
    assert bob[0]["late"]["penalty"] == 1.0 and bob[0]["late"]["days_late"] == 1
    assert round(sum(r["late_penalty"] for r in bob), 2) == 1.0
    assert round(sum(r["points"] for r in bob), 2) == 9.0
    assert all(r["points"] == round(r["raw_points"] - r["late_penalty"], 2) for r in bob)
    assert all(r["late_penalty"] == 0 for r in by(records, "bob", CH3) + by(records, "amy"))
    # carol's time is unknown (no timestamp.txt; file times only with --file-times): no penalty, said so.
    assert all(r["points"] == r["raw_points"] for r in by(records, "carol"))
    assert by(records, "carol")[0]["late"]["summary"].startswith("Submission time unknown")
    table = {row["submission"]: row for row in csv.DictReader(io.StringIO((folder / "grades.csv").read_text()))}
    assert (table["bob"]["points"], table["bob"]["raw_points"], table["bob"]["late_penalty"]) == ("16", "17", "1")
    feedback = (folder / "feedback" / "bob.md").read_text()
    assert f"- {CH2}: Submitted 2026-10-25 09:00 CET, 1 day late: -10% of the points (-1 point)." in feedback
    assert "**16 / 20 points**" in feedback


def test_file_times_count_only_when_asked(capsys, folder):
    records = apply_policy(capsys, folder, "--policy", str(folder.parent / "policy.toml"), "--file-times")
    carol = by(records, "carol")
    assert carol[0]["late"]["days_late"] == 3 and carol[0]["late"]["time_source"] == "the file's modification time"
    # bob's timestamp.txt wins over his file's time.
    assert by(records, "bob", CH2)[0]["late"]["days_late"] == 1


def test_applying_again_or_with_an_extension_recomputes_from_the_raw_points(capsys, folder):
    policy_file = str(folder.parent / "policy.toml")
    first = apply_policy(capsys, folder, "--policy", policy_file)
    again = apply_policy(capsys, folder, "--policy", policy_file)
    assert [r["points"] for r in again] == [r["points"] for r in first]  # not penalized twice
    (folder.parent / "extensions.csv").write_text("student,chapter,due\nbob,02_attention,2026-10-25 23:59\n")
    with open(policy_file, "a") as f:
        f.write('[extensions]\nfile = "extensions.csv"\n')
    extended = apply_policy(capsys, folder, "--policy", policy_file)
    assert all(r["points"] == r["raw_points"] for r in by(extended, "bob"))
    assert "extension to 2026-10-25 23:59 CET" in by(extended, "bob", CH2)[0]["late"]["summary"]
    removed = apply_policy(capsys, folder, "--no-policy")
    assert all("late" not in r and "raw_points" not in r for r in removed)
    assert sum(r["points"] for r in by(removed, "bob")) == 17
    assert not (folder / "policy.json").exists()


def test_a_times_file_wins_and_may_name_chapters_this_folder_did_not_grade(capsys, folder):
    policy_file = folder.parent / "policy.toml"
    policy_file.write_text(policy_file.read_text().replace("per_student = 0", "per_student = 1"))
    times = folder.parent / "times.csv"
    # amy's chapter 04, graded elsewhere, was due after 02: her token still goes to 02 (due first),
    # where the times file says she was a day late.
    times.write_text("student,chapter,submitted_at\namy,02,2026-10-25T08:00:00+00:00\namy,04,2026-11-15 12:00\n")
    records = apply_policy(capsys, folder, "--policy", str(policy_file), "--submitted-at", str(times))
    decision = by(records, "amy", CH2)[0]["late"]
    assert (decision["tokens"], decision["days_late"], decision["time_source"]) == (1, 0, "the submission times file")
    assert decision["summary"] == "Submitted 2026-10-25 09:00 CET, 1 day late, 1 day waived by 1 late token: no penalty."


def test_policy_mistakes_stop_apply_policy_with_exit_2_and_change_nothing(capsys, folder):
    before = (folder / "grades.json").read_text()
    bad = folder.parent / "bad.toml"
    bad.write_text("[chapters.02_attention]\n")
    assert main(["apply-policy", str(folder), "--policy", str(bad)]) == 2
    assert "no due date" in capsys.readouterr().err
    assert (folder / "grades.json").read_text() == before


def test_the_late_section_of_the_class_report_counts_each_chapter(capsys, folder):
    apply_policy(capsys, folder, "--policy", str(folder.parent / "policy.toml"))
    report = (folder / "report.html").read_text()
    row = report[report.index('<h2 id="late">'):].split("<tr>")[2]
    cells = [cell.split(">")[-1] for cell in row.split("</td>")[:-1]]
    # 02: three submissions, bob late, carol's time unknown, 1 point lost.
    assert cells == [CH2, "3", "1", "0", "0", "0", "0", "1", "1"]


# ------------------------------------------------------------------------------------------
# Through the grader: timestamp.txt, a resumed run, a timestamp.txt a student put there
# ------------------------------------------------------------------------------------------

def test_grade_reads_timestamp_txt_in_nbgraders_layout_only_and_a_resumed_run_keeps_the_policy(tmp_path):
    from factory import filled_notebook, run_grader, write_notebook

    course = tmp_path / "course"
    for student in ("late", "downloaded"):
        notebook = course / "submitted" / student / CH2 / f"{CH2}.ipynb"
        notebook.parent.mkdir(parents=True)
        write_notebook(filled_notebook(CH2), notebook)
        (notebook.parent / "timestamp.txt").write_text("2026-10-27 10:00:00 UTC")  # 3 days late
    # A folder of downloads: a timestamp.txt that came with the student's files counts for nothing.
    downloads = tmp_path / "downloads" / "early" / "work"
    downloads.mkdir(parents=True)
    write_notebook(filled_notebook(CH2), downloads / f"{CH2}.ipynb")
    (downloads / "timestamp.txt").write_text("2026-10-01 10:00:00 UTC")
    (tmp_path / "policy.toml").write_text(textwrap.dedent(AUTUMN))
    out = tmp_path / "grades"
    records = run_grader([course / "submitted", tmp_path / "downloads"], out, "--jobs", "1", "--device", "cpu",
                         "--policy", str(tmp_path / "policy.toml"))
    late_records = by(records, "late")
    assert late_records[0]["late"]["days_late"] == 3
    assert round(sum(r["points"] for r in late_records), 2) == round(0.7 * sum(r["raw_points"] for r in late_records), 2)
    assert by(records, "early")[0]["late"]["submitted_at"] is None  # unknown, not 1 October
    assert json.loads((out / "times.json").read_text())["early"][CH2]["timestamp"] is None
    # Run again without --policy (a resumed run, or regrade): the folder's policy still applies.
    again = run_grader([course / "submitted", tmp_path / "downloads"], out, "--jobs", "1", "--device", "cpu")
    assert [r["points"] for r in again] == [r["points"] for r in records]
