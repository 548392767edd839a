"""Writing the gradebook: grades.csv, grades.json and one feedback file per submission.

Feedback shows each task's status, points and message, never the hidden tests' code.
"""
import csv
import json
import os
import re

from gptcourse.tasks import TASKS

STATUS_MARK = {"passed": "✅", "failed": "❌", "error": "⚠️", "timeout": "⏱️"}


def write_all(records, out_dir, run):
    with open(os.path.join(out_dir, "grades.json"), "w", encoding="utf-8") as f:
        json.dump(records, f, indent=1)
    write_csv(records, os.path.join(out_dir, "grades.csv"))
    feedback_dir = os.path.join(out_dir, "feedback")
    os.makedirs(feedback_dir, exist_ok=True)
    for submission, rows in by_submission(records).items():
        path = os.path.join(feedback_dir, f"{safe_name(submission)}.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(feedback_markdown(submission, rows, run))


def by_submission(records):
    grouped = {}
    for record in records:
        grouped.setdefault(record["submission"], []).append(record)
    return grouped


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "submission"


def write_csv(records, path):
    graded_tasks = [t.id for t in TASKS if any(r["task"] == t.id for r in records)]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "points", "max_points"] + [f"task {t}" for t in graded_tasks])
        for submission, rows in by_submission(records).items():
            points = {r["task"]: r["points"] for r in rows}
            writer.writerow(
                [submission, sum(points.values()), sum(r["max_points"] for r in rows)]
                + [points.get(t, "") for t in graded_tasks]
            )


def feedback_markdown(submission, rows, run):
    total = sum(r["points"] for r in rows)
    possible = sum(r["max_points"] for r in rows)
    lines = [f"# Feedback for {submission}", "", f"**{total} / {possible} points**", "",
             "| task | graded names | status | points |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['task']} [{r['level']}] | `{'`, `'.join(r['names'])}` | "
                     f"{STATUS_MARK.get(r['status'], '')} {r['status']} | {r['points']} / {r['max_points']} |")
    lines.append("")
    for r in rows:
        lines += [f"## Task {r['task']}: {', '.join(r['names'])} ({r['notebook']})", "", r["feedback"] or "", ""]
        lines += [f"- Note: {note}" for note in r.get("notes", [])]
        lines.append("")
    lines.append(f"_Graded on {run['device']} with hidden test seed {run['seed']}. Each task was graded "
                 f"with the reference versions of earlier tasks, so one mistake costs points once._")
    return "\n".join(lines) + "\n"
