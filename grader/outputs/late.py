"""The late policy applied to a grade folder: submission times, final points, `apply-policy`.

    python -m grader grade PATH... --out DIR --policy policy.toml [--submitted-at times.csv] [--file-times]
    python -m grader apply-policy DIR --policy policy.toml [--submitted-at times.csv] [--file-times]
    python -m grader apply-policy DIR --no-policy

The policy itself (grader/grading/policy.py) decides how late each chapter was and what that
costs; this module puts the decision into the grade folder:

- **times.json**: the submission times the grader found while grading, per submission and
  chapter: nbgrader's `timestamp.txt` (what `nbgrader collect` and the course hub's collect
  write beside the notebook in submitted/STUDENT/CHAPTER/), and the notebook file's modification
  time, which counts only with --file-times (a copy or a download changes it). A times CSV
  (--submitted-at: student, chapter, submitted_at, as Gradescope or an LMS exports them) wins
  over both.
- **policy.json**: the policy last applied (resolved: dates, extensions, tokens, the times CSV).
  Every later rewrite of the grades (a resumed run, `regrade`) applies it again; `apply-policy`
  replaces it and rewrites the grades without running any student code.
- **grades.json**: each task record keeps its `raw_points` and gets `late_penalty` (its part of
  the chapter's penalty) and `late` (the chapter's decision: time, days late, share, tokens,
  extension, one line for the student); `points` is what is left. Everything that reads points
  (grades.csv, exports, push-lms, Gradescope) therefore uses the final points.

`python -m grader apply-policy` is grader/outputs/apply_policy.py. Both files are written by the grader from memory, after the run: student code that ran without a
sandbox cannot change the times or the policy a run applies.
"""
import datetime
import json
import os
import sys

from grader.grading import gradefolder, policy as late_policy
from grader.grading.gradefolder import write_atomically

TIMES = "times.json"
POLICY = "policy.json"


# ------------------------------------------------------------------------------------------
# Submission times, found while grading
# ------------------------------------------------------------------------------------------

def found_times(submissions):
    """{submission id: {chapter: {"timestamp": ISO or None, "file_time": ISO}}} of the graded
    notebooks. A timestamp.txt counts only in nbgrader's layout (_in_nbgrader_layout), never
    inside a zip or a folder of downloads."""
    from grader.grading.submissions import graded_notebooks

    times = {}
    for submission in submissions:
        for notebook in graded_notebooks(submission):
            entry = {"timestamp": None, "file_time": _file_time(submission, notebook)}
            if _in_nbgrader_layout(submission, notebook):
                folder = os.path.dirname(os.path.abspath(notebook.path))
                try:
                    stamp = late_policy.read_timestamp_file(os.path.join(folder, late_policy.TIMESTAMP_FILE))
                except late_policy.PolicyError as exc:
                    print(f"warning: {submission.id}: {exc}; its submission time is unknown", file=sys.stderr)
                    stamp = None
                entry["timestamp"] = stamp.isoformat() if stamp else None
            times.setdefault(submission.id, {})[notebook.chapter] = entry
    return times


def _in_nbgrader_layout(submission, notebook):
    """Whether the notebook lies at submitted/STUDENT/ASSIGNMENT/, where nbgrader's collect (not the
    student) writes timestamp.txt. A timestamp.txt anywhere else came with the student's files."""
    student = os.path.abspath(submission.path)
    folder = os.path.dirname(os.path.abspath(notebook.path))
    return (os.path.isdir(student) and os.path.basename(os.path.dirname(student)) == "submitted"
            and os.path.dirname(folder) == student)


def _file_time(submission, notebook):
    """The modification time of what was handed in: the zip or notebook file given, else the notebook."""
    path = submission.path if os.path.isfile(submission.path) else notebook.path
    try:
        return datetime.datetime.fromtimestamp(os.stat(path).st_mtime, late_policy.UTC).isoformat()
    except OSError:
        return None


def read_times(out_dir):
    """times.json of a grade folder ({} when the folder has none)."""
    try:
        with open(os.path.join(out_dir, TIMES), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ------------------------------------------------------------------------------------------
# The policy a folder applies: policy.json
# ------------------------------------------------------------------------------------------

class Setting:
    """A policy with the times CSV and the --file-times choice that go with it."""

    def __init__(self, policy, csv_times=None, file_times=False):
        self.policy, self.csv_times, self.file_times = policy, dict(csv_times or {}), file_times

    @classmethod
    def from_files(cls, policy_path, times_path=None, file_times=False):
        policy = late_policy.read_policy(policy_path)
        times = late_policy.read_times(times_path, policy.zone) if times_path else {}
        return cls(policy, times, file_times)

    def to_data(self):
        p = self.policy
        return {"source": p.source, "timezone": p.zone.key, "tokens": p.tokens,
                "grace_minutes": p.grace.total_seconds() / 60,
                "chapters": {name: {"due": c.due.isoformat(), "last": c.last.isoformat() if c.last else None,
                                    "per_day": c.per_day, "max_share": c.max_share} for name, c in p.chapters.items()},
                "extensions": [[s, c, due.isoformat()] for (s, c), due in sorted(p.extensions.items())],
                "submitted_at": [[s, c, t.isoformat()] for (s, c), t in sorted(self.csv_times.items())],
                "file_times": self.file_times}

    @classmethod
    def from_data(cls, data):
        zone = late_policy.ZoneInfo(data["timezone"])

        def moment(text):  # back in the policy's zone, whose name the feedback shows
            return datetime.datetime.fromisoformat(text).astimezone(zone)

        chapters = {name: late_policy.Chapter(due=moment(c["due"]), last=moment(c["last"]) if c["last"] else None,
                                              per_day=c["per_day"], max_share=c["max_share"])
                    for name, c in data["chapters"].items()}
        policy = late_policy.Policy(zone=zone, chapters=chapters,
                                    tokens=data["tokens"], grace=datetime.timedelta(minutes=data["grace_minutes"]),
                                    extensions={(s, c): moment(due) for s, c, due in data["extensions"]},
                                    source=data["source"])
        return cls(policy, {(s, c): moment(t) for s, c, t in data["submitted_at"]}, data["file_times"])


def read_setting(out_dir):
    """The Setting of a grade folder's policy.json; None when it has none. The grader reads it
    before any student code runs and keeps it in memory."""
    path = os.path.join(out_dir, POLICY)
    try:
        with open(path, encoding="utf-8") as f:
            return Setting.from_data(json.load(f))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise late_policy.PolicyError(f"{path} is not a policy the grader wrote ({exc}); apply one again: "
                                      f"python -m grader apply-policy {out_dir} --policy policy.toml") from None


def write_setting(out_dir, setting):
    """policy.json (or its removal, for setting None)."""
    path = os.path.join(out_dir, POLICY)
    if setting is None:
        if os.path.lexists(path):
            os.unlink(path)
        return
    write_atomically(path, json.dumps(setting.to_data(), indent=1))


# ------------------------------------------------------------------------------------------
# Applying it to the records
# ------------------------------------------------------------------------------------------

def raw(record):
    """The record as the hidden tests graded it, without any penalty applied before."""
    record = dict(record)
    if "raw_points" in record:
        record["points"] = record.pop("raw_points")
    record.pop("late_penalty", None)
    record.pop("late", None)
    return record


def apply(records, setting, times):
    """The records with the policy applied (new dicts; `records` may carry an earlier penalty).

    times: times.json's content. Without a setting the records come back raw."""
    records = [raw(r) for r in records]
    if setting is None:
        return records
    by_student = {}
    for record in records:
        by_student.setdefault(record["submission"], {}).setdefault(record["chapter"], []).append(record)
    for student, chapters in by_student.items():
        known = submission_times(setting, student, times.get(student, {}), chapters)
        decided = late_policy.decide(setting.policy, student, {c: t for c, (t, _) in known.items()})
        for chapter, rows in chapters.items():
            if chapter in setting.policy.chapters:
                lateness = decided.get(chapter) or late_policy.Lateness(submitted_at=None)
                _penalize(rows, lateness, known.get(chapter, (None, None))[1])
    return records


def submission_times(setting, student, found, chapters):
    """{chapter: (aware time, where it came from)} for one student: the times CSV first, then
    timestamp.txt, then (with --file-times) the file's time. The CSV may name chapters this folder
    did not grade: they count when tokens are spent."""
    known = {}
    for (name, chapter), moment in setting.csv_times.items():
        if name == student:
            known[chapter] = (moment, "the submission times file")
    for chapter in chapters:
        if chapter in known:
            continue
        entry = found.get(chapter) or {}
        if entry.get("timestamp"):
            known[chapter] = (datetime.datetime.fromisoformat(entry["timestamp"]), "nbgrader's timestamp.txt")
        elif setting.file_times and entry.get("file_time"):
            known[chapter] = (datetime.datetime.fromisoformat(entry["file_time"]), "the file's modification time")
    return known


def _penalize(rows, lateness, source):
    """Spread the chapter's penalty over its task records, in hundredths of a point, in
    proportion to their points (the largest remainders get the odd hundredths)."""
    total = sum(r["points"] for r in rows)
    penalty = late_policy.penalty_points(total, lateness.share) if lateness.submitted_at else 0
    cents = round(penalty * 100)
    shares = [r["points"] * cents / total if total else 0 for r in rows]
    parts = [int(s) for s in shares]
    for index in sorted(range(len(rows)), key=lambda i: parts[i] - shares[i])[:cents - sum(parts)]:
        parts[index] += 1
    decision = _decision(lateness, penalty, source)
    for record, part in zip(rows, parts):
        record["raw_points"] = record["points"]
        record["late_penalty"] = part / 100
        record["points"] = round(record["points"] - part / 100, 2) if part else record["points"]
        record["late"] = decision


def _decision(lateness, penalty, source):
    iso = (lambda moment: moment.isoformat() if moment else None)
    return {"submitted_at": iso(lateness.submitted_at), "time_source": source, "due": iso(lateness.due),
            "days_late": lateness.days_late, "share": lateness.share, "penalty": penalty,
            "tokens": lateness.tokens, "extension": iso(lateness.extension), "after_last": lateness.after_last,
            "summary": late_policy.summary(lateness, penalty)}


def chapter_decisions(records):
    """{(submission, chapter): the `late` decision} of records that carry one."""
    return {(r["submission"], r["chapter"]): r["late"] for r in records if isinstance(r.get("late"), dict)}



# ------------------------------------------------------------------------------------------
# The command line's options (grade, and apply-policy: grader/outputs/apply_policy.py)
# ------------------------------------------------------------------------------------------

def add_policy_options(parser):
    parser.add_argument("--policy", metavar="FILE", help="policy.toml: due dates, last dates, penalty, tokens, "
                                                         "extensions (docs/grading.md)")
    parser.add_argument("--submitted-at", metavar="CSV", help="submission times (student, chapter, submitted_at), "
                                                              "as Gradescope or an LMS exports them")
    parser.add_argument("--file-times", action="store_true",
                        help="where no other time is known, take the notebook file's modification time")


def setting_from(args):
    """The Setting of the command line's --policy options (None without --policy)."""
    if not args.policy:
        if args.submitted_at or args.file_times:
            raise late_policy.PolicyError("--submitted-at and --file-times need a --policy")
        return None
    return Setting.from_files(args.policy, args.submitted_at, args.file_times)
