"""Who can read what in the course hub: each attempt made as a student's own unix account.

A term hub (`python -m grader hub init`) with an instructor and two students; the instructor
releases 02_attention, both students fetch and submit it, the instructor collects, autogrades and
releases feedback, and the second student fetches theirs: nbgrader's whole exchange, run as the
accounts a hub runs it as (the browser's part is tests/hub/test_hub_round_trip.py). Then the
first student tries, and must fail, to read the other's submission and feedback, the other's
home, the instructor's course directory (source/ with the solutions, autograded/, the gradebook)
and the checkout's masters and hidden tests, and to hand in work in the other's name.

nbgrader's exchange hides a submission, and a feedback file, by a name nobody can guess (a random
string; a hash of a secret) in a folder students may add to but not list: the tests check that
the listing is refused and that the names carry that randomness. Needs root (accounts): marked
slow (autograde runs two kernels).
"""
import json
import os

import pytest

from factory import REPO
from grader.hub import commands as course_hub
from hub_machine import nbgrader_as, python_as
from lab_in_browser import free_port

pytestmark = pytest.mark.slow

CHAPTER = "02_attention"


@pytest.fixture(scope="module")
def term(machine):
    """The hub's folder after one round of release, submit, collect, autograde and feedback."""
    folder = machine.folder()
    (folder / "roster.csv").write_text("username\n" + "\n".join(machine.students) + "\n")
    hub_dir = folder / "hub"
    course_hub.init(hub_dir, roster=str(folder / "roster.csv"), instructor=machine.instructor, port=free_port(),
                    task_timeout=10)
    course = json.loads((hub_dir / "hub.json").read_text())["course_dir"]
    nbgrader_as(hub_dir, machine.instructor, "release_assignment", CHAPTER, cwd=course)
    for student in machine.students:
        nbgrader_as(hub_dir, student, "fetch_assignment", CHAPTER)
        nbgrader_as(hub_dir, student, "submit", CHAPTER)
    for step in ("collect", "autograde", "generate_feedback", "release_feedback"):
        nbgrader_as(hub_dir, machine.instructor, step, CHAPTER, cwd=course)
    nbgrader_as(hub_dir, machine.students[1], "fetch_feedback", CHAPTER)
    return hub_dir, course


def refused(hub_dir, user, action):
    """Run `action` (Python code naming `path`) as `user`: whether it raised PermissionError."""
    result = python_as(hub_dir, user, f"try:\n    {action}\n    print('ALLOWED')\nexcept PermissionError:\n"
                                      f"    print('REFUSED')\n")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip() == "REFUSED"


def exchange_course(hub_dir):
    return hub_dir / "exchange" / course_hub.COURSE_ID


def test_a_student_cannot_list_the_submissions_in_the_exchange(machine, term):
    hub_dir, _ = term
    inbound = exchange_course(hub_dir) / "inbound"
    assert refused(hub_dir, machine.students[0], f"__import__('os').listdir({str(inbound)!r})")
    # ... and a submission's folder name ends with nbgrader's random string: it cannot be guessed.
    other = next(name for name in os.listdir(inbound) if name.startswith(machine.students[1] + "+"))
    assert len(other.rsplit("+", 1)[1]) >= 12


def test_a_student_cannot_list_the_feedback_in_the_exchange(machine, term):
    hub_dir, _ = term
    feedback = exchange_course(hub_dir) / "feedback"
    assert os.listdir(feedback), "no feedback was released"
    assert refused(hub_dir, machine.students[0], f"__import__('os').listdir({str(feedback)!r})")


def test_a_student_cannot_read_another_students_home(machine, term):
    hub_dir, _ = term
    home = os.path.expanduser(f"~{machine.students[1]}")
    fetched = os.path.join(home, CHAPTER, f"{CHAPTER}.ipynb")
    assert os.path.exists(fetched) and os.path.isdir(os.path.join(home, CHAPTER, "feedback"))
    assert refused(hub_dir, machine.students[0], f"open({fetched!r}).read()")
    assert refused(hub_dir, machine.students[0], f"__import__('os').listdir({home!r})")


@pytest.mark.parametrize("part", ["source", "autograded", "gradebook.db", "submitted", "feedback"])
def test_a_student_cannot_read_the_instructors_course_directory(machine, term, part):
    hub_dir, course = term
    path = os.path.join(course, part)
    assert os.path.exists(path)
    action = f"open({path!r}, 'rb').read()" if part.endswith(".db") else f"__import__('os').listdir({path!r})"
    assert refused(hub_dir, machine.students[0], action)


@pytest.mark.parametrize("part", ["solutions", "grader/reference", "grader/chapters", "tests/corpus", ".git"])
def test_a_student_cannot_read_the_masters_or_hidden_tests_in_the_checkout(machine, term, part):
    hub_dir, _ = term
    assert refused(hub_dir, machine.students[0], f"__import__('os').listdir({str(REPO / part)!r})")
    # The instructor can: autograde imports the hidden tests from there.
    assert not refused(hub_dir, machine.instructor, f"__import__('os').listdir({str(REPO / part)!r})")


def test_a_student_still_has_the_student_package(machine, term):
    hub_dir, _ = term
    result = python_as(hub_dir, machine.students[0], "import gptcourse, torch; print(gptcourse.__name__)")
    assert result.returncode == 0 and result.stdout.strip() == "gptcourse", result.stderr


def test_work_handed_in_under_another_students_name_is_not_collected(machine, term):
    """nbgrader's submit takes any student id, and its collect only warns when the folder's owner
    is someone else: the hub's collect (grader/hub/collect.py) leaves such a folder out."""
    hub_dir, course = term
    mallory, victim = machine.students
    mine = os.path.join(course, "submitted", victim, CHAPTER, f"{CHAPTER}.ipynb")
    genuine = open(mine).read()
    forged = os.path.expanduser(f"~{mallory}/{CHAPTER}/{CHAPTER}.ipynb")
    with open(forged, "a") as f:
        f.write("\n")  # a notebook that differs from the victim's
    nbgrader_as(hub_dir, mallory, "submit", CHAPTER, f"--CourseDirectory.student_id={victim}")

    collected = nbgrader_as(hub_dir, machine.instructor, "collect", CHAPTER, "--update", cwd=course)
    assert open(mine).read() == genuine
    assert f"claims to be a submission of {victim} but was made by {mallory}: not collected" in collected.stderr

    # nbgrader's own collect would have taken it as the victim's work: what the hub's closes.
    nbgrader_as(hub_dir, machine.instructor, "collect", CHAPTER, "--update",
                "--ExchangeFactory.collect=nbgrader.exchange.default.collect.ExchangeCollect", cwd=course)
    assert open(mine).read() != genuine


def test_a_backdated_submission_gets_the_time_the_file_system_recorded(machine, term):
    """nbgrader takes a submission's time from its folder's name and its timestamp.txt, both written
    by the student's submit: a student can hand in late and claim an earlier time. The hub's collect
    takes the time the files were last changed (their ctime, which no user can set back)."""
    import datetime

    hub_dir, course = term
    student = machine.students[0]
    collected_copy = os.path.join(course, "submitted", student, CHAPTER)
    earlier = open(os.path.join(collected_copy, "timestamp.txt")).read().strip()  # the fixture's submit
    # An hour before the first submission: nbgrader's own collect would keep the first one; the
    # hub's sees files changed just now, so this is the newest submission, made now.
    claimed = (datetime.datetime.strptime(earlier, "%Y-%m-%d %H:%M:%S.%f UTC")
               - datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    inbound = exchange_course(hub_dir) / "inbound" / f"{student}+{CHAPTER}+{claimed}+backdated0000"
    notebook = os.path.expanduser(f"~{student}/{CHAPTER}/{CHAPTER}.ipynb")
    result = python_as(hub_dir, student, "\n".join([
        "import os, shutil",
        f"os.makedirs({str(inbound)!r})",
        f"shutil.copy({notebook!r}, {str(inbound / (CHAPTER + '.ipynb'))!r})",
        f"open({str(inbound / 'timestamp.txt')!r}, 'w').write({claimed!r})",
        f"for name in os.listdir({str(inbound)!r}):",
        f"    os.utime(os.path.join({str(inbound)!r}, name), (0, 0))  # modification times set back too",
    ]))
    assert result.returncode == 0, result.stderr
    collected = nbgrader_as(hub_dir, machine.instructor, "collect", CHAPTER, "--update", cwd=course)
    recorded = open(os.path.join(collected_copy, "timestamp.txt")).read().strip()
    assert datetime.datetime.strptime(recorded, "%Y-%m-%d %H:%M:%S.%f UTC") >= before, (recorded, claimed)
    assert "that time counts" in collected.stderr
