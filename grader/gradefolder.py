"""The grade folder's files: their names, and how every one of them is written.

A graded folder holds run.json (how the run was made), results.jsonl (one record per graded
task, appended as they come: what a resumed run keeps), grades.json and grades.csv (the
gradebook), feedback/<submission>.md and report.html. Every module that writes there writes
through write_atomically, and names a submission's file with safe_name.
"""
import hashlib
import os
import re
import tempfile

RUN = "run.json"
RESULTS = "results.jsonl"
GRADES_JSON = "grades.json"
GRADES_CSV = "grades.csv"
FEEDBACK = "feedback"
REPORT = "report.html"


def write_atomically(path, data):
    """Write a whole file or nothing: a temporary file beside it, then a rename over it.

    The rename replaces whatever is at `path` (a file, or a link someone put there) in one
    step, so readers never see half a file and nothing written there before survives.
    `data` is text (written as UTF-8) or bytes (written exactly as they are).
    """
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".writing-", dir=folder)
    try:
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


def safe_name(name):
    """A file name for a submission id: letters, digits, '.', '_' and '-' only.

    When characters had to be replaced, a short hash of the id is added, so that two ids
    that differ only there ("a b", "a_b") never share a feedback file.
    """
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip(".") or "submission"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return safe
