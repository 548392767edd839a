"""The course grader's points into an nbgrader gradebook.

    python -m grader push-nbgrader DIR --db URL --assignment NAME [--course-dir COURSE] [--chapter CH]

For an instructor who keeps grades in nbgrader (formgrader, `nbgrader export`) but grades with
the course grader: each task's points (DIR/grades.json) become the `auto_score` of the task's
check cell (`check_2_4`) in the student's submission of the assignment, as `nbgrader autograde`
would have recorded them. Students and submissions are created when missing; `manual_score`
and `extra_credit` are never touched; when an auto_score changes, `needs_manual_grade` is set
as autograde sets it (true only where a grader gave a manual score, which then asks for a
look); a grade whose auto_score is already right is not touched at all. Students without
records in grades.json are left alone. Running it twice gives the same gradebook.

The submissions get no files: the formgrader lists their scores, but has no autograded
notebook to show (the grader's feedback is in DIR/feedback/).

The assignment's structure (its notebook, grade cells with their points, solution and source
cells with their checksums) is nbgrader's own: `nbgrader generate_assignment NAME` records it
from the master. This command does not imitate that, since autograde, the formgrader and a
later generate_assignment all rely on details (checksums, source cells) that nbgrader owns.
So, when the gradebook lacks the assignment:
- without --course-dir it stops and says to run generate_assignment;
- with --course-dir COURSE it runs `nbgrader generate_assignment NAME --force` there, against
  --db, after putting the chapter's master into COURSE/source/NAME/ if that folder holds no
  notebook (and the course's nbgrader_config.py into COURSE if it has none).

The chapter of the assignment comes from its check cells in the gradebook; for a
generate_assignment run here, from --chapter or from the assignment's name (02_attention,
02_..., ch02...). The points of every check cell must equal the grader's maxima (both come
from the same master): a gradebook generated from another version of the master is refused.
"""
import argparse
import os
import shutil
import subprocess
import sys
import warnings

from gptcourse.checking import conventions
from gptcourse.checking.tasks import chapter_names, get_task, task_of_cell, tasks_of


class PushError(Exception):
    """The push cannot be done as asked (the message says why and what to do)."""


def _gradebook(db_url):
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SQLAlchemyError

    # course_id "": do not add a course row to the instructor's database (nbgrader's default
    # course id would); nothing written here belongs to a course.
    from grader.paths import nbgrader_command

    # A new database gets its schema version from the `alembic` command: it must be found
    # even when this interpreter's bin/ is not on PATH (a virtual environment not activated).
    saved = os.environ.get("PATH")
    os.environ["PATH"] = nbgrader_command()[1]["PATH"]
    try:
        return Gradebook(db_url, course_id="")
    except (SQLAlchemyError, ValueError, OSError, subprocess.CalledProcessError) as exc:
        raise PushError(f"the gradebook {db_url} could not be opened ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0]})") from None
    finally:
        if saved is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = saved


def sqlite_path(db_url):
    """The file of a sqlite URL (sqlite:///relative or sqlite:////absolute), else None."""
    if db_url.startswith("sqlite:///") and db_url[len("sqlite:///"):] not in ("", ":memory:"):
        return db_url[len("sqlite:///"):].split("?")[0]
    return None


def assignment_layout(db_url, assignment):
    """{notebook name: {grade cell name: max score}} of the assignment; None when it is missing."""
    from nbgrader.api import MissingEntry

    with _gradebook(db_url) as gradebook:
        try:
            found = gradebook.find_assignment(assignment)
        except MissingEntry:
            return None
        return {notebook.name: {cell.name: cell.max_score for cell in notebook.grade_cells}
                for notebook in found.notebooks}


def notebook_chapters(layout):
    """{notebook name: chapter} for the notebooks whose grade cells are the course's check cells."""
    found = {}
    for notebook, cells in (layout or {}).items():
        chapters = {task_of_cell(name).chapter for name in cells
                    if conventions.is_kind(name, conventions.CHECK) and task_of_cell(name)}
        if len(chapters) > 1:
            raise PushError(f"the notebook {notebook!r} holds check cells of several chapters "
                            f"({', '.join(sorted(chapters))}); one notebook is one chapter")
        if chapters:
            found[notebook] = chapters.pop()
    return found


def chapter_of_name(name):
    """The chapter an assignment's name stands for ('02_attention', '02_...', 'ch02...'), or None."""
    lowered = name.lower()
    for chapter in chapter_names():
        number = chapter[:2]
        if lowered == chapter or lowered.startswith(chapter[:3]) or lowered.startswith(f"ch{number}") \
                or lowered.startswith(f"chapter{number}") or lowered.startswith(f"chapter_{number}"):
            return chapter
    return None


def generate_assignment(course_dir, assignment, chapter, db_url):
    """Run `nbgrader generate_assignment` for the assignment in course_dir, against db_url."""
    from grader.nbgrading import course as nbgrader_course
    from grader.paths import NBGRADER_CONFIG, master_path

    course_dir = os.path.abspath(course_dir)
    os.makedirs(course_dir, exist_ok=True)
    config = os.path.join(course_dir, "nbgrader_config.py")
    if not os.path.exists(config):
        shutil.copy(NBGRADER_CONFIG, config)
        print(f"copied the course's nbgrader configuration to {config}")
    source = os.path.join(course_dir, "source", assignment)
    if not (os.path.isdir(source) and any(n.endswith(".ipynb") for n in os.listdir(source))):
        os.makedirs(source, exist_ok=True)
        shutil.copy(master_path(chapter), os.path.join(source, f"{chapter}.ipynb"))
        print(f"copied the master of {chapter} to {os.path.join(source, chapter + '.ipynb')}")
    print(f"running nbgrader generate_assignment {assignment} in {course_dir}")
    try:
        nbgrader_course.run_nbgrader(course_dir, "generate_assignment", assignment, "--force",
                                     f"--CourseDirectory.db_url={db_url}")
    except RuntimeError as exc:
        raise PushError(f"nbgrader generate_assignment failed: {exc}") from None


def _check_points(notebook, chapter, cells, records):
    """Every task of the chapter has its check cell, with the grader's maximum."""
    from grader.paths import load_manifest

    manifest = load_manifest()
    maxima = {r["task"]: r["max_points"] for r in records if get_task(r["task"]).chapter == chapter}
    problems = []
    for task in tasks_of(chapter):
        expected = maxima.get(task.id, manifest[chapter]["tasks"][task.id]["points"])
        if task.check_cell_id not in cells:
            problems.append(f"{task.check_cell_id} is missing")
        elif float(cells[task.check_cell_id]) != float(expected):
            problems.append(f"{task.check_cell_id} is worth {cells[task.check_cell_id]:g} points there, "
                            f"{expected:g} for the grader")
    if problems:
        raise PushError(f"the gradebook's notebook {notebook!r} does not match the master of {chapter}: "
                        f"{'; '.join(problems)}. It was generated from another version of the master: run "
                        f"nbgrader generate_assignment again (possible while it has no submissions)")


def push(out_dir, db_url, assignment, course_dir=None, chapter=None):
    """Push grades.json's points into the gradebook; returns a summary dict."""
    from grader.outputs.exports import ExportError, load_records

    try:
        records = load_records(out_dir)
    except ExportError as exc:
        raise PushError(str(exc)) from None
    if chapter is not None and chapter not in chapter_names():
        raise PushError(f"unknown chapter {chapter!r}; the chapters are {', '.join(chapter_names())}")

    database = sqlite_path(db_url)
    if database and not os.path.exists(database):
        if course_dir is None:  # a typo must not leave an empty gradebook behind
            raise PushError(f"there is no gradebook at {database} (nbgrader creates it with generate_assignment; "
                            f"--course-dir COURSE_DIR runs that here)")
        os.makedirs(os.path.dirname(os.path.abspath(database)), exist_ok=True)
    # A missing sqlite file is left for generate_assignment to create, as nbgrader does.
    layout = assignment_layout(db_url, assignment) if not database or os.path.exists(database) else None
    notebooks = notebook_chapters(layout)
    if not notebooks or (chapter and chapter not in notebooks.values()):
        wanted = chapter or chapter_of_name(assignment)
        if course_dir is None:
            state = "has no assignment" if layout is None else "has no notebook with the course's check cells in"
            raise PushError(
                f"the gradebook {db_url} {state} {assignment!r}: run `nbgrader generate_assignment {assignment}` "
                f"in the nbgrader course directory (with --db={db_url} if that is not its gradebook), or give "
                f"--course-dir COURSE_DIR and this command runs it there")
        if wanted is None:
            raise PushError(f"which chapter is the assignment {assignment!r}? Give --chapter (one of "
                            f"{', '.join(chapter_names())})")
        generate_assignment(course_dir, assignment, wanted, db_url)
        layout = assignment_layout(db_url, assignment)
        notebooks = notebook_chapters(layout)
        if wanted not in notebooks.values():
            raise PushError(f"after generate_assignment the gradebook still has no notebook of {wanted} in "
                            f"{assignment!r}: is COURSE/source/{assignment}/ another chapter's master?")
    if chapter:
        notebooks = {nb: ch for nb, ch in notebooks.items() if ch == chapter}
    for notebook, nb_chapter in notebooks.items():
        _check_points(notebook, nb_chapter, layout[notebook], records)

    by_chapter = {nb_chapter: notebook for notebook, nb_chapter in notebooks.items()}
    pushed = [r for r in records if get_task(r["task"]).chapter in by_chapter]
    other = sorted({get_task(r["task"]).chapter for r in records} - set(by_chapter))
    summary = {"assignment": assignment, "notebooks": dict(notebooks), "students_created": [],
               "submissions_created": [], "changed": [], "unchanged": 0, "not_pushed_chapters": other,
               "late_penalties": {}}
    if pushed:
        _write_grades(db_url, assignment, by_chapter, pushed, summary)
    return summary


def _write_grades(db_url, assignment, by_chapter, records, summary):
    from nbgrader.api import MissingEntry

    by_student = {}
    for record in records:
        by_student.setdefault(record["submission"], []).append(record)
    with _gradebook(db_url) as gradebook:
        for student_id in sorted(by_student):
            try:
                gradebook.find_student(student_id)
            except MissingEntry:
                gradebook.add_student(student_id)
                summary["students_created"].append(student_id)
            try:
                gradebook.find_submission(assignment, student_id)
            except MissingEntry:
                with warnings.catch_warnings():  # nbgrader's own add_submission warns of its autoflush
                    warnings.simplefilter("ignore")
                    gradebook.add_submission(assignment, student_id)
                summary["submissions_created"].append(student_id)
            for record in by_student[student_id]:
                task = get_task(record["task"])
                notebook = by_chapter[task.chapter]
                try:
                    grade = gradebook.find_grade(task.check_cell_id, notebook, assignment, student_id)
                except MissingEntry:
                    raise PushError(f"{student_id}'s submission of {assignment!r} has no grade for "
                                    f"{task.check_cell_id} in {notebook!r} (the submission predates the "
                                    f"assignment's current notebooks?)") from None
                if not isinstance(record.get("points"), (int, float)) or isinstance(record["points"], bool):
                    raise PushError(f"grades.json: the record of {student_id}, task {task.id} has no points")
                # A cell's score is what the hidden tests gave; a late penalty is the notebook's, as in
                # nbgrader's own autograde (grader/nbgrading/late.py).
                score = float(record.get("raw_points", record["points"]))
                _set_late_penalty(gradebook, notebook, assignment, student_id, record, summary)
                if grade.auto_score == score:
                    summary["unchanged"] += 1  # needs_manual_grade too is left as a grader set it
                    continue
                summary["changed"].append((student_id, task.id, grade.auto_score, score))
                grade.auto_score = score
                # As nbgrader's autograde: a new automatic score over a manual one asks for review.
                grade.needs_manual_grade = grade.manual_score is not None
            gradebook.db.commit()


def _set_late_penalty(gradebook, notebook, assignment, student_id, record, summary):
    """The notebook's late_submission_penalty: the chapter's penalty under the grade folder's
    policy (grader/outputs/late.py), none without one."""
    decision = record.get("late")
    penalty = float(decision["penalty"]) if isinstance(decision, dict) and decision.get("penalty") else None
    submitted = gradebook.find_submission_notebook(notebook, assignment, student_id)
    if submitted.late_submission_penalty != penalty:
        submitted.late_submission_penalty = penalty
        summary["late_penalties"][student_id] = penalty


# ------------------------------------------------------------------------------------------
# Command line: python -m grader push-nbgrader ...
# ------------------------------------------------------------------------------------------

def add_parser(commands):
    p = commands.add_parser("push-nbgrader", help="record a graded folder's points in an nbgrader gradebook")
    p.add_argument("dir", metavar="DIR", help="the folder that `grade --out` wrote (its grades.json)")
    p.add_argument("--db", required=True, metavar="URL",
                   help="the gradebook, e.g. sqlite:///path/to/course/gradebook.db")
    p.add_argument("--assignment", required=True, metavar="NAME", help="the nbgrader assignment")
    p.add_argument("--course-dir", metavar="COURSE",
                   help="an nbgrader course directory where `nbgrader generate_assignment NAME` is run when "
                        "the gradebook lacks the assignment (without it, that is an error)")
    p.add_argument("--chapter", choices=chapter_names(),
                   help="the assignment's chapter, when generate_assignment must run and NAME does not say it")
    return p


def main(args):
    try:
        summary = push(args.dir, args.db, args.assignment, args.course_dir, args.chapter)
    except PushError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    notebooks = ", ".join(f"{nb} ({ch})" for nb, ch in summary["notebooks"].items())
    print(f"assignment {args.assignment}: notebook {notebooks}")
    for key, what in (("students_created", "students added"), ("submissions_created", "submissions added")):
        if summary[key]:
            print(f"{what}: {', '.join(summary[key])}")
    for student, task, before, after in summary["changed"]:
        was = "none" if before is None else f"{before:g}"
        print(f"  {student} task {task}: auto_score {was} -> {after:g}")
    print(f"{len(summary['changed'])} grades set, {summary['unchanged']} already up to date")
    for student, penalty in sorted(summary["late_penalties"].items()):
        print(f"  {student}: late_submission_penalty {'none' if penalty is None else f'{penalty:g}'}")
    if summary["not_pushed_chapters"]:
        print(f"not pushed (not in this assignment): {', '.join(summary['not_pushed_chapters'])}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m grader.nbgrading.push")
    add_parser(parser.add_subparsers(dest="command", required=True))
    sys.exit(main(parser.parse_args()))
