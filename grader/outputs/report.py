"""Writing the gradebook: grades.csv, grades.json, one feedback file per submission and report.html.

Feedback shows each task's status, points and message, never the hidden tests' code.
"""
import csv
import io
import json
import os
import sys

from gptcourse.checking.tasks import all_tasks
from grader.grading import gradefolder
from grader.outputs import challenge_report, late
from grader.grading.gradefolder import safe_name, write_atomically

STATUS_MARK = {"passed": "✅", "failed": "❌", "error": "⚠️", "timeout": "⏱️", "memory": "💾"}


def write_all(records, out_dir, run, setting=None, times=None):
    """Write the grade files of `records` (the hidden tests' points) with the late policy `setting`
    applied (grader/outputs/late.py; None: no policy), and times.json when `times` is given;
    returns the records as written."""
    if times is not None:
        write_atomically(os.path.join(out_dir, late.TIMES), json.dumps(times, indent=1))
    late.write_setting(out_dir, setting)
    records = late.apply(records, setting, times if times is not None else late.read_times(out_dir))
    write_atomically(os.path.join(out_dir, gradefolder.GRADES_JSON), json.dumps(records, indent=1))
    write_atomically(os.path.join(out_dir, gradefolder.GRADES_CSV), csv_text(records))
    feedback_dir = os.path.join(out_dir, gradefolder.FEEDBACK)
    if os.path.islink(feedback_dir) or (os.path.exists(feedback_dir) and not os.path.isdir(feedback_dir)):
        os.unlink(feedback_dir)  # not ours: a folder is made below
    os.makedirs(feedback_dir, exist_ok=True)
    board = challenge_report.read_board(out_dir)  # the class challenge, when the folder has one
    for submission, rows in by_submission(records).items():
        path = os.path.join(feedback_dir, f"{safe_name(submission)}.md")
        write_atomically(path, feedback_markdown(submission, rows, run, challenge_report.feedback_line(board, submission)))
    write_class_report(records, out_dir, run)
    return records


def write_class_report(records, out_dir, run):
    """report.html (grader/outputs/class_report.py), after the feedback files it links to. The grades
    are written already: a report that fails says so and does not fail the run."""
    try:
        from grader.outputs.class_report import write_report

        write_report(records, out_dir, run)
    except Exception as exc:  # noqa: BLE001 - the grade files above are what counts
        print(f"warning: report.html could not be written ({type(exc).__name__}: {exc}); "
              f"try again with: python -m grader report {out_dir}", file=sys.stderr)


def by_submission(records):
    grouped = {}
    for record in records:
        grouped.setdefault(record["submission"], []).append(record)
    return grouped


def csv_text(records):
    graded_tasks = [t.id for t in all_tasks() if any(r["task"] == t.id for r in records)]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    penalized = any("late" in r for r in records)  # a late policy applied: its columns too
    writer.writerow(["submission", "points", "max_points"] + (["raw_points", "late_penalty"] if penalized else [])
                    + [f"task {t}" for t in graded_tasks])
    for submission, rows in by_submission(records).items():
        points = {r["task"]: r["points"] for r in rows}
        late_columns = [total(rows, "raw_points"), total(rows, "late_penalty")] if penalized else []
        writer.writerow(
            [submission, total(rows), sum(r["max_points"] for r in rows)] + late_columns
            + [points.get(t, "") for t in graded_tasks]
        )
    return buffer.getvalue()


def total(rows, field="points"):
    """The sum of a points field over records, to hundredths (a late penalty leaves hundredths;
    adding floats must not print 2.6999999999999997). A record without the field counts its points."""
    value = sum(r.get(field, r["points"] if field == "raw_points" else 0) for r in rows)
    if isinstance(value, float):
        value = round(value, 2)
        return int(value) if value.is_integer() else value
    return value


def feedback_markdown(submission, rows, run, challenge_line=None):
    lines = feedback_summary(submission, rows)
    if challenge_line:
        lines += [challenge_line, ""]
    for r in rows:
        lines += task_feedback(r)
    lines.append(graded_with(run))
    return "\n".join(lines) + "\n"


def feedback_summary(submission, rows):
    """The top of a feedback file: the total and a table of the tasks."""
    possible = sum(r["max_points"] for r in rows)
    lines = [f"# Feedback for {submission}", "", f"**{total(rows)} / {possible} points**", ""]
    lines += late_lines(rows)
    lines += ["| task | graded names | status | points |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['task']} [{r['level']}] | `{'`, `'.join(r['names'])}` | "
                     f"{STATUS_MARK.get(r['status'], '')} {r['status']} | {r['points']} / {r['max_points']} |")
    lines.append("")
    return lines


def late_lines(rows):
    """One line per chapter under a late policy: when it came, how late, what it cost and which
    extension or tokens applied (grader/outputs/late.py)."""
    lines = []
    for (_, chapter), decision in late.chapter_decisions(rows).items():
        lines.append(f"- {chapter}: {decision['summary']}")
    return lines + [""] if lines else []


def task_feedback(r):
    """One task's section of a feedback file (also the output of its Gradescope test)."""
    lines = [f"## Task {r['task']}: {', '.join(r['names'])} ({r['notebook']})", "", r["feedback"] or "", ""]
    lines += [f"- Note: {note}" for note in r.get("notes", [])]
    lines.append("")
    return lines


def graded_with(run):
    """The last line of a feedback file: how the submission was graded."""
    return (f"_Graded on {run['device']} with hidden test seed {run['seed']}. Each task was graded "
            f"with the reference versions of earlier tasks, so one mistake costs points once._")
