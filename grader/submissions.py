"""Finding submissions and the task cells inside them.

A submission is one student's work: one or more chapter notebooks. Accepted layouts:
- nbgrader's `submitted/<student>/<assignment>/<notebook>.ipynb` (give the course directory
  or its `submitted/` folder): one submission per student;
- a folder with one sub-folder or one .zip per student: one submission each;
- .ipynb files given directly or lying in the folder: one submission per file.
A notebook that is not valid JSON still becomes part of its submission, with an error that
the report shows for each of its chapter's tasks.
"""
import ast
import hashlib
import json
import os
import re
import zipfile
from dataclasses import dataclass, field

from gptcourse.tasks import CHAPTERS, get_task, task_of_cell


@dataclass
class Notebook:
    path: str
    chapter: str = None
    cells: list = field(default_factory=list)  # code cells as dicts (source, metadata)
    error: str = None  # why the notebook could not be read
    sha: str = ""


@dataclass
class Submission:
    id: str
    notebooks: list


def discover(paths, unpack_dir):
    """All submissions under the given paths, in a stable order."""
    found = []
    for path in paths:
        path = os.path.abspath(path)
        if os.path.isdir(os.path.join(path, "submitted")):
            path = os.path.join(path, "submitted")
        if os.path.isfile(path):
            found.append(_submission_from_file(path, unpack_dir))
        elif os.path.isdir(path):
            for entry in sorted(os.listdir(path)):
                full = os.path.join(path, entry)
                if entry.startswith("."):
                    continue
                if os.path.isdir(full):
                    found.append(Submission(entry, _notebooks_under(full)))
                elif entry.endswith((".ipynb", ".zip")):
                    found.append(_submission_from_file(full, unpack_dir))
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    ids = [s.id for s in found]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise ValueError(f"two submissions have the same name: {', '.join(sorted(duplicates))}")
    return found


def _submission_from_file(path, unpack_dir):
    stem = os.path.splitext(os.path.basename(path))[0]
    if path.endswith(".zip"):
        target = os.path.join(unpack_dir, stem)
        try:
            with zipfile.ZipFile(path) as archive:
                _safe_extract(archive, target)
        except zipfile.BadZipFile:
            return Submission(stem, [Notebook(path, chapter=_chapter_from_name(path),
                                              error="the .zip file is damaged")])
        return Submission(stem, _notebooks_under(target))
    return Submission(stem, [read_notebook(path)])


def _safe_extract(archive, target):
    """Extract, refusing members that would land outside the target folder."""
    root = os.path.realpath(target)
    for member in archive.namelist():
        destination = os.path.realpath(os.path.join(target, member))
        if not destination.startswith(root + os.sep):
            raise zipfile.BadZipFile(f"unsafe path in archive: {member}")
    archive.extractall(target)


def _notebooks_under(folder):
    notebooks = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
        notebooks += [read_notebook(os.path.join(root, f)) for f in sorted(files) if f.endswith(".ipynb")]
    return notebooks


def read_notebook(path):
    with open(path, "rb") as f:
        raw = f.read()
    notebook = Notebook(path, sha=hashlib.sha256(raw).hexdigest())
    try:
        data = json.loads(raw.decode("utf-8"))
        cells = data["cells"]
        if not isinstance(cells, list):
            raise ValueError("'cells' is not a list")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        notebook.error = f"the notebook file is not valid notebook JSON ({type(exc).__name__}: {exc})"
        notebook.chapter = _chapter_from_name(path)
        return notebook
    notebook.cells = [_plain_cell(c) for c in cells if isinstance(c, dict)]
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    notebook.chapter = (
        (metadata.get("gptcourse") or {}).get("chapter")
        or _chapter_from_grade_ids(notebook.cells)
        or _chapter_from_name(path)
    )
    if notebook.chapter not in CHAPTERS:
        notebook.chapter = None
    return notebook


def _plain_cell(cell):
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(str(s) for s in source)
    metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    nbgrader = metadata.get("nbgrader") if isinstance(metadata.get("nbgrader"), dict) else {}
    return {"type": cell.get("cell_type"), "source": str(source), "grade_id": nbgrader.get("grade_id")}


def _chapter_from_grade_ids(cells):
    for cell in cells:
        task = task_of_cell(cell["grade_id"])
        if task:
            return task.chapter
    return None


def _chapter_from_name(path):
    name = os.path.basename(path)
    for chapter in CHAPTERS:
        if chapter in name or name.startswith(chapter[:3]):
            return chapter
    return None


# ------------------------------------------------------------------------------------------
# Cells
# ------------------------------------------------------------------------------------------

def find_task_cell(notebook, task_id):
    """(source, note) of the cell that holds the task's solution, or (None, why not)."""
    task = get_task(task_id)
    tagged = [c for c in notebook.cells if c["type"] == "code" and c["grade_id"] == task.solution_cell_id]
    for cell in reversed(tagged):
        if _defines(cell["source"], task.names):
            return cell["source"], None
    defining = [c for c in notebook.cells if c["type"] == "code" and _defines(c["source"], task.names)]
    if defining:
        note = (f"the solution of task {task_id} was not in its own cell ({task.solution_cell_id}); "
                f"graded the last cell that defines {', '.join(task.names)}")
        return defining[-1]["source"], note
    if tagged:
        return tagged[-1]["source"], None  # defines nothing parseable: the worker says why
    return None, (f"no cell defines {', '.join(task.names)} (the solution cell {task.solution_cell_id} "
                  f"is missing)")


def _defines(source, names):
    try:
        tree = ast.parse(_without_magics(source))
    except SyntaxError:
        return False
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return all(name in defined for name in names)


def _without_magics(source):
    return re.sub(r"^(\s*)[%!].*$", r"\1pass", source, flags=re.MULTILINE)


def check_cell_note(notebook, task_id, released_check_source):
    """A note when the task's check cell was deleted or edited (the grade never depends on it)."""
    task = get_task(task_id)
    cells = [c for c in notebook.cells if c["grade_id"] == task.check_cell_id]
    if not cells:
        return f"the check cell of task {task_id} was deleted (this does not change the grade)"
    if all(c["source"].strip() != released_check_source.strip() for c in cells):
        return f"the check cell of task {task_id} was edited (ignored: the grader runs its own tests)"
    return None
