"""Gradebook exports: a graded folder's grades.json as a Canvas or Moodle grade import.

    python -m grader export DIR --format canvas|moodle --out FILE [--roster ROSTER.csv]
                                [--per chapter|task] [--no-bom]

One column per chapter (default) or per task, in course order, for the chapters that
grades.json holds; one row per student, sorted by submission id.

Canvas ("Import" in the Gradebook): the columns of Canvas's own export, `Student`, `ID`,
`SIS User ID`, `SIS Login ID`, `Section`, then one column per assignment, and a second row
`Points Possible` with each column's maximum. Canvas matches a row to a student by `ID`
(its numeric user id), then `SIS User ID`, then `SIS Login ID`, then by name; a column to an
assignment by a trailing "(<assignment id>)" in its header, else by the whole header as the
assignment's title, else it creates a new assignment with that title and the Points Possible.

Moodle ("Import" > "CSV file" in the Gradebook): an identifier column (`Email address` or
`Username`, mapped to the user field of that name on Moodle's import page) and one column per
grade item; numbers with a dot; "-" for no grade (what Moodle's own exports write; an empty
cell in a *new* grade item would be stored as a grade).

Empty is not 0: a chapter the student did not submit is left empty (Canvas: empty; Moodle:
"-"). Within a submitted chapter a task the grader could not grade counts 0 in the chapter
total (per task, such a task is empty). Students of the roster without any submission get a
row with every grade empty. Importing an empty cell over a grade that the LMS already holds
removes that grade there (both LMSs show the changes before applying them).

The file is UTF-8 with a byte order mark by default: Excel needs it to show non-ASCII names
correctly, Canvas's importer finds its `Student` header with the mark in front of it, and
Moodle's CSV reader removes it. `--no-bom` leaves it out. Cells are quoted by the csv module
(commas, quotes, line breaks), and a name or id that starts with =, +, -, @, a tab or a
carriage return gets a leading ' so that a spreadsheet never runs it as a formula.
"""
import argparse
import csv
import io
import os
import sys
from dataclasses import dataclass, field

from gptcourse.checking import tasks as _tasks
from gptcourse.checking.tasks import chapter_names, get_task, tasks_of
from grader.grading import gradefolder

FORMATS = ("canvas", "moodle")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
# Roster columns (case and spaces do not matter) and the other names accepted for them.
ROSTER_FIELDS = {
    "submission": ("submission", "submission_id"),
    "name": ("name", "student", "full_name"),
    "id": ("id", "canvas_id", "user_id"),
    "sis_user_id": ("sis_user_id",),
    "login": ("login", "sis_login_id", "username"),
    "section": ("section",),
    "email": ("email", "email_address"),
}
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NO_GRADE = {"canvas": "", "moodle": "-"}


class ExportError(Exception):
    """A problem with the export's inputs (the message says which and what to do)."""


@dataclass
class Column:
    key: str  # chapter id or task id
    title: str
    tasks: list  # task ids the column adds up
    max_points: float = 0


@dataclass
class Student:
    submission: str
    info: dict = field(default_factory=dict)  # the roster's fields for this student, if any
    graded: bool = False  # has records in grades.json


# ------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------

def load_records(out_dir):
    """The task records of a graded folder (its grades.json)."""
    path = os.path.join(out_dir, gradefolder.GRADES_JSON)
    try:
        records = gradefolder.read_grades(out_dir)
    except gradefolder.GradeFolderError as exc:
        raise ExportError(str(exc)) from None
    known = []
    for record in records:
        if record.get("task") not in _tasks.TASKS_BY_ID or not isinstance(record.get("submission"), str):
            print(f"warning: {path}: skipped a record of an unknown task or without a submission id "
                  f"({record.get('submission')!r}, task {record.get('task')!r})", file=sys.stderr)
            continue
        known.append(record)
    return known


def _roster_key(header):
    normalized = "_".join(str(header).strip().lower().replace("-", " ").split())
    for key, names in ROSTER_FIELDS.items():
        if normalized in names:
            return key
    return None


def read_roster(path):
    """{submission id: {field: value}} from a roster CSV (columns: see ROSTER_FIELDS)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            rows = list(csv.reader(f))
    except OSError as exc:
        raise ExportError(f"the roster {path} could not be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ExportError(f"the roster {path} is not UTF-8 text: save it as 'CSV UTF-8'") from None
    if not rows:
        raise ExportError(f"the roster {path} is empty")
    keys = [_roster_key(h) for h in rows[0]]
    if "submission" not in keys:
        raise ExportError(f"the roster {path} has no 'submission' column (the submission id of each student, "
                          f"as in grades.json); its columns are {', '.join(rows[0])}")
    roster = {}
    for number, row in enumerate(rows[1:], 2):
        info = {}
        for key, value in zip(keys, row):
            if key and value.strip() and key not in info:
                info[key] = value.strip()
        submission = info.pop("submission", "")
        if not submission:
            if any(v for v in info.values()):
                print(f"warning: roster line {number}: no submission id, skipped", file=sys.stderr)
            continue
        if submission in roster:
            raise ExportError(f"the roster {path} names the submission {submission!r} twice (line {number})")
        roster[submission] = info
    return roster


# ------------------------------------------------------------------------------------------
# The table: columns, students, scores
# ------------------------------------------------------------------------------------------

def chapter_title(chapter):
    """'Chapter 02 — Attention and causal masking': the chapter's heading in the course table
    (its notebook's first line, tests/test_chapter_structure.py checks)."""
    from gptcourse.checking.course import get_chapter

    try:
        return get_chapter(chapter).heading
    except KeyError:
        return f"Chapter {chapter.split('_')[0]}"


def task_title(task_id):
    task = get_task(task_id)
    return f"Task {task.id} — {task.title}"


def task_maxima(records):
    """{task id: its maximum}: from the records, else from the reference manifest."""
    maxima = {}
    for record in records:
        if isinstance(record.get("max_points"), (int, float)):
            maxima.setdefault(record["task"], record["max_points"])
    chapters = {get_task(task_id).chapter for task_id in maxima}
    missing = [t.id for chapter in chapters for t in tasks_of(chapter) if t.id not in maxima]
    if missing:
        from grader.paths import load_manifest

        manifest = load_manifest()
        for task_id in missing:
            maxima[task_id] = manifest[get_task(task_id).chapter]["tasks"][task_id]["points"]
    return maxima


def columns(records, per="chapter"):
    """The export's grade columns, in course order, for the chapters that the records hold."""
    if per not in ("chapter", "task"):
        raise ExportError(f"--per must be chapter or task, not {per!r}")
    maxima = task_maxima(records)
    graded_chapters = {get_task(r["task"]).chapter for r in records}
    found = []
    for chapter in chapter_names():
        if chapter not in graded_chapters:
            continue
        task_ids = [t.id for t in tasks_of(chapter)]
        if per == "chapter":
            found.append(Column(chapter, chapter_title(chapter), task_ids, sum(maxima[t] for t in task_ids)))
        else:
            found += [Column(t, task_title(t), [t], maxima[t]) for t in task_ids]
    return found


def scores_by_student(records, cols):
    """{submission: {column key: points or None}}. None: not graded (no notebook of that chapter).

    A chapter column adds up its tasks; a task of a submitted chapter without a record counts 0.
    """
    points = {}
    for record in records:
        value = record.get("points")
        points.setdefault(record["submission"], {})[record["task"]] = (
            value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0)
    table = {}
    for submission, by_task in points.items():
        row = {}
        for column in cols:
            graded = [t for t in column.tasks if t in by_task]
            row[column.key] = _rounded(sum(by_task[t] for t in graded)) if graded else None
        table[submission] = row
    return table


def _rounded(value):
    """Points to hundredths (a late penalty leaves hundredths; a float sum must not add noise)."""
    return round(value, 2) if isinstance(value, float) else value


def students(records, roster):
    """Every student to export, sorted by submission id: the graded ones and the roster's."""
    graded = {r["submission"] for r in records}
    roster = roster or {}
    return [Student(s, roster.get(s, {}), s in graded) for s in sorted(graded | set(roster))]


# ------------------------------------------------------------------------------------------
# Cells
# ------------------------------------------------------------------------------------------

def number(value):
    """Points as text: integers without a decimal point, others with a dot and no exponent."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:.6f}".rstrip("0").rstrip(".")


def text(value):
    """A name or id that a spreadsheet must not run as a formula (CSV injection)."""
    value = "" if value is None else str(value)
    return "'" + value if value.startswith(FORMULA_STARTS) else value


# ------------------------------------------------------------------------------------------
# Formats
# ------------------------------------------------------------------------------------------

def canvas_rows(records, roster=None, per="chapter"):
    cols = columns(records, per)
    table = scores_by_student(records, cols)
    rows = [list(CANVAS_IDENTITY) + [c.title for c in cols],
            ["Points Possible"] + [""] * (len(CANVAS_IDENTITY) - 1) + [number(c.max_points) for c in cols]]
    for student in students(records, roster):
        info = student.info
        has_key = any(info.get(k) for k in ("id", "sis_user_id", "login"))
        identity = [info.get("name") or student.submission, info.get("id"), info.get("sis_user_id"),
                    info.get("login") or (None if has_key else student.submission), info.get("section")]
        grades = table.get(student.submission, {})
        rows.append([text(v) for v in identity]
                    + [number(grades.get(c.key)) or NO_GRADE["canvas"] for c in cols])
    return rows


def moodle_identifier(everyone, roster):
    """('Email address', {submission: email}) when every exported student has an email in the
    roster, else ('Username', {submission: login or submission id}).

    Every row needs an identifier: Moodle's importer gives a row with an empty one to the
    student of the row above it.
    """
    if roster and everyone and all(s.info.get("email") for s in everyone):
        return "Email address", {s.submission: s.info["email"] for s in everyone}
    if roster and any(s.info.get("email") for s in everyone):
        print("warning: not every student has an email in the roster (the submissions missing from it have "
              "none): the Moodle file identifies students by Username instead", file=sys.stderr)
    return "Username", {s.submission: s.info.get("login") or s.submission for s in everyone}


def moodle_rows(records, roster=None, per="chapter"):
    cols = columns(records, per)
    table = scores_by_student(records, cols)
    everyone = students(records, roster)
    header, identifiers = moodle_identifier(everyone, roster)
    rows = [[header] + [c.title for c in cols]]
    for student in everyone:
        grades = table.get(student.submission, {})
        rows.append([text(identifiers[student.submission])]
                    + [number(grades.get(c.key)) or NO_GRADE["moodle"] for c in cols])
    return rows


def csv_text(rows):
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue()


def export(out_dir, fmt, out_file, roster_path=None, per="chapter", bom=True):
    """Write the export; returns (number of students, number of grade columns)."""
    if fmt not in FORMATS:
        raise ExportError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    records = load_records(out_dir)
    if not records:
        raise ExportError(f"{os.path.join(out_dir, gradefolder.GRADES_JSON)} holds no graded task")
    roster = read_roster(roster_path) if roster_path else None
    if roster is not None:
        unknown = sorted({r["submission"] for r in records} - set(roster))
        if unknown:
            consequence = (" (Moodle refuses the whole file when a user is not found: add them to the roster or "
                           "delete their rows)" if fmt == "moodle" else "")
            print(f"warning: {len(unknown)} submission(s) not in the roster, exported under their submission id"
                  f"{consequence}: {', '.join(unknown)}", file=sys.stderr)
        absent = sorted(set(roster) - {r["submission"] for r in records})
        if absent:
            print(f"note: {len(absent)} roster student(s) without a graded submission get empty grades: "
                  f"{', '.join(absent)}", file=sys.stderr)
    rows = (canvas_rows if fmt == "canvas" else moodle_rows)(records, roster, per)
    from grader.grading.gradefolder import write_atomically

    folder = os.path.dirname(os.path.abspath(out_file))
    os.makedirs(folder, exist_ok=True)
    write_atomically(out_file, ("\ufeff" if bom else "") + csv_text(rows))
    return len(rows) - (2 if fmt == "canvas" else 1), len(rows[0]) - (len(CANVAS_IDENTITY) if fmt == "canvas" else 1)


# ------------------------------------------------------------------------------------------
# Command line: python -m grader export ...
# ------------------------------------------------------------------------------------------

def add_parser(commands):
    p = commands.add_parser("export", help="write a Canvas or Moodle grade import (CSV) from a graded folder")
    p.add_argument("dir", metavar="DIR", help="the folder that `grade --out` wrote (its grades.json)")
    p.add_argument("--format", required=True, choices=FORMATS)
    p.add_argument("--out", required=True, metavar="FILE", help="the CSV file to write")
    p.add_argument("--roster", metavar="ROSTER.csv",
                   help="columns: submission, and any of name, id, sis_user_id, login, section, email")
    p.add_argument("--per", default="chapter", choices=["chapter", "task"],
                   help="one grade column per chapter (default) or per task")
    p.add_argument("--no-bom", dest="bom", action="store_false",
                   help="no UTF-8 byte order mark (by default there is one, for Excel)")
    return p


def main(args):
    try:
        count, grade_columns = export(args.dir, args.format, args.out, args.roster, args.per, args.bom)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {count} students, {grade_columns} grade columns ({args.format}, per {args.per})")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m grader.outputs.exports")
    add_parser(parser.add_subparsers(dest="command", required=True))
    sys.exit(main(parser.parse_args()))
