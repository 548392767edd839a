"""The grade folder's files: their names, and how every one of them is written.

A graded folder holds run.json (how the run was made), results.jsonl (one record per graded
task, appended as they come: what a resumed run keeps), grades.json and grades.csv (the
gradebook), feedback/<submission>.md and report.html; `python -m grader similarity` adds
similarity.json and similarity/ (grader/outputs/similarity.py). Every module that writes there writes
through write_atomically, and names a submission's file with safe_name.

A record is one graded task of one submission: `new_record` starts it, `finished` completes
it with the verdict. results.jsonl is read back as untrusted input (student code may have
written it when there was no sandbox): `load_results` keeps a line only when `trusted_record`
can rebuild it from well-formed fields.
"""
import hashlib
import json
import os
import re
import tempfile
import time

from gptcourse.checking import findings
from gptcourse.checking.tasks import get_task

RUN = "run.json"
RESULTS = "results.jsonl"
GRADES_JSON = "grades.json"
GRADES_CSV = "grades.csv"
FEEDBACK = "feedback"
REPORT = "report.html"
SIMILARITY = "similarity.json"
SIMILARITY_PAGES = "similarity"

STATUSES = ("passed", "failed", "error", "timeout", "memory")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class GradeFolderError(Exception):
    """A file of the grade folder is missing or is not what the grader writes (the message
    says which file, and what to do)."""


# ------------------------------------------------------------------------------------------
# Reading the folder back: run.json and grades.json, for every command that reads them
# ------------------------------------------------------------------------------------------

def _read_json(out_dir, name):
    path = os.path.join(out_dir, name)
    try:
        with open(path, encoding="utf-8") as f:
            return path, json.load(f)
    except FileNotFoundError:
        raise GradeFolderError(f"{path} does not exist: {out_dir} was never graded; grade first "
                               f"(python -m grader grade PATH... --out {out_dir})") from None
    except (OSError, ValueError) as exc:
        raise GradeFolderError(f"{path} could not be read ({exc})") from None


def read_grades(out_dir):
    """grades.json's task records, a list of dicts; GradeFolderError when it is missing or is
    something else. The records' fields are still to be checked by whoever reads them."""
    path, records = _read_json(out_dir, GRADES_JSON)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise GradeFolderError(f"{path} is not a list of task records")
    return records


def read_run(out_dir, required=True):
    """run.json (the seed, the device, the isolation, the paths and limits of the run) as a
    dict. required=False: {} when it is missing or unreadable, for a reader that says what it
    can without it."""
    try:
        path, run = _read_json(out_dir, RUN)
        if not isinstance(run, dict):
            raise GradeFolderError(f"{path} is not the record of a grade run")
    except GradeFolderError:
        if required:
            raise
        return {}
    return run


def write_atomically(path, data, mode=None):
    """Write a whole file or nothing: a temporary file beside it, then a rename over it.

    The rename replaces whatever is at `path` (a file, or a link someone put there) in one
    step, so readers never see half a file and nothing written there before survives.
    `data` is text (written as UTF-8) or bytes (written exactly as they are). `mode` (0o600
    for a secret) is the file's mode from its creation on; by default the umask decides.
    """
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".writing-", dir=folder)
    try:
        # mkstemp makes the file private (0600); a grade file gets the mode any new file of this
        # user gets (0644 under the usual umask), so that teaching assistants sharing the folder
        # can read it.
        os.fchmod(handle, 0o666 & ~current_umask() if mode is None else mode)
        if isinstance(data, bytes):
            f = os.fdopen(handle, "wb")
        else:
            f = os.fdopen(handle, "w", encoding="utf-8", newline="", errors="backslashreplace")
        with f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def current_umask():
    """This process's umask, read without changing it (Linux shows it in /proc; elsewhere it is
    set and restored at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def safe_name(name):
    """A file name for a submission id: letters, digits, '.', '_' and '-' only.

    When characters had to be replaced, a short hash of the id is added, so that two ids
    that differ only there ("a b", "a_b") never share a feedback file.
    """
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip(".") or "submission"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return safe


def readable(text):
    """`text` with every lone surrogate replaced by U+FFFD.

    Lone surrogates come from file names that are not UTF-8 (Python decodes their bytes
    as surrogates) and from JSON escapes like "\\udcff"; they cannot be written as UTF-8,
    so no name or message that holds one may reach a results file.
    """
    return _LONE_SURROGATE.sub("\ufffd", text)


# ------------------------------------------------------------------------------------------
# Records
# ------------------------------------------------------------------------------------------

def new_record(submission, notebook, notebook_sha, task, max_points, run):
    """A record being graded: who and what, before its verdict. `task` is a course task row."""
    return {
        "submission": submission,
        "notebook": notebook,
        "notebook_sha": notebook_sha,
        "chapter": task.chapter,
        "task": task.id,
        "names": list(task.names),
        "level": task.level,
        "max_points": max_points,
        "seed": run["seed"],
        "device": run["device"],
        "notes": [],
        "started": time.time(),
    }


def finished(record, status, feedback, seconds=None, finding=None):
    """The finished record. duration_s is the task's own time: the worker's (`seconds`, measured
    by the pool from sending the job to its reply) when a worker ran it, else the time since the
    record was made (a task that never reached a worker is finished at once). finding: what was
    wrong as fields (gptcourse/checking/findings.py), None when the task passed."""
    record = dict(record)
    started = record.pop("started")
    record["status"] = status
    record["points"] = record["max_points"] if status == "passed" else 0
    record["feedback"] = feedback
    record["finding"] = finding.to_json() if finding else None
    record["duration_s"] = seconds if seconds is not None else round(time.time() - started, 3)
    return record


def readable_record(value):
    """The record with lone surrogates replaced in every string (see readable)."""
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, list):
        return [readable_record(item) for item in value]
    if isinstance(value, dict):
        return {readable(str(key)): readable_record(item) for key, item in value.items()}
    return value


# ------------------------------------------------------------------------------------------
# results.jsonl: appended during a run, read back (as untrusted input) when a run resumes
# ------------------------------------------------------------------------------------------

def open_results(path):
    """results.jsonl for appending, on a new line: a run killed while writing may have left a last
    line without its newline, and a record appended to it would make one line that no resume reads
    (that record would be lost, and its task graded again). The fragment stays a line of its own,
    which load_results skips and the end of the run drops."""
    try:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            ended = f.read(1) == b"\n"
    except OSError:
        ended = True  # no file yet, or an empty one
    results_file = open(path, "a", encoding="utf-8")
    if not ended:
        results_file.write("\n")
        results_file.flush()
    return results_file


def remove_unfinished_writes(out_dir):
    """Remove the temporary files (write_atomically's `.writing-*`) of a run killed while it
    wrote its grade files: this run writes every one of those files again."""
    for folder in (out_dir, os.path.join(out_dir, FEEDBACK)):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".writing-") and not entry.is_dir(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass


def load_results(out_dir, run, manifest):
    """The records of an earlier run with the same seed and device, keyed like the pending tasks.

    Anyone (student code without a sandbox, too) could have written to results.jsonl, so a
    line is kept only when every field is well-formed, and only its identity, status and
    messages are taken from it: points, maximum, names and level come from the manifest.
    A line that is not kept just means that task is graded again.
    """
    done = {}
    path = os.path.join(out_dir, RESULTS)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError:
        return done  # no earlier run (or no readable one): grade everything
    for line in lines:
        record = trusted_record(line, run, manifest)
        if record:
            done[(record["submission"], record["notebook_sha"], record["task"])] = record
    return done


def _task_or_none(task_id):
    """The course's task with this id; None for anything else (another type, an unknown id)."""
    if not isinstance(task_id, str):
        return None
    try:
        return get_task(task_id)
    except KeyError:
        return None


def trusted_record(line, run, manifest):
    """The record on a results.jsonl line, rebuilt from its checked fields; None if malformed."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None  # a line cut short by an interruption, or not a record at all
    if not isinstance(record, dict) or record.get("grader_fault"):
        return None  # the grader itself failed on that task: try again
    task = _task_or_none(record.get("task"))
    if task is None or task.id not in manifest.get(task.chapter, {}).get("tasks", {}):
        return None
    if record.get("seed") != run["seed"] or record.get("device") != run["device"]:
        return None  # another run's cases or devices
    texts = ("submission", "notebook", "notebook_sha")
    notes = record.get("notes")
    if (not all(isinstance(record.get(k), str) for k in texts) or record.get("status") not in STATUSES
            or not isinstance(record.get("feedback"), (str, type(None)))
            or not isinstance(notes, list) or not all(isinstance(n, str) for n in notes)
            or not isinstance(record.get("duration_s"), (int, float)) or isinstance(record.get("duration_s"), bool)):
        return None
    finding = findings.from_json(record.get("finding"))
    if (finding is None) != (record["status"] == "passed"):
        return None  # a task that did not pass says what went wrong, as fields too
    # Built the way a fresh record is, so points and everything else come from the manifest.
    base = new_record(record["submission"], os.path.basename(record["notebook"]), record["notebook_sha"], task,
                      manifest[task.chapter]["tasks"][task.id]["points"], run)
    base["notes"] = notes
    trusted = finished(base, record["status"], record["feedback"], finding=finding)
    trusted["duration_s"] = record["duration_s"]
    return readable_record(trusted)
