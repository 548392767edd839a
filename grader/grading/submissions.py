"""Finding submissions and the task cells inside them.

A submission is one student's work: one or more chapter notebooks. Accepted layouts:
- nbgrader's `submitted/<student>/<assignment>/<notebook>.ipynb` (give the course directory
  or its `submitted/` folder): one submission per student;
- a folder with one sub-folder or one .zip per student: one submission each;
- .ipynb files given directly or lying in the folder: one submission per file.

Everything here reads files that students made, so nothing in it may stop a batch: a
problem with one submission becomes an `error` on that submission's notebook (the report
shows it for each of the chapter's tasks), and a problem with one cell becomes a `problem`
on that cell (it matters only when that cell is the one graded). Every message names the
problem and says where it is.

Encodings: Jupyter saves notebooks as UTF-8. UTF-8 with a byte order mark, UTF-16 and UTF-32
(which JSON also allows) are read too; any other encoding (latin-1, cp1252, ...) is an
error that names the first byte that is not UTF-8, since guessing could change the code.
Notebooks in the old nbformat 3 (and older) are converted with nbformat, as Jupyter does
when it opens them.
"""
import ast
import hashlib
import json
import os
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass, field

from gptcourse.checking import conventions
from gptcourse.checking.tasks import chapter_names, get_task, task_of_cell
from grader.grading.gradefolder import _LONE_SURROGATE, readable  # readable: also imported from here

# Limits on what one submission may make the grader read. A notebook with its plots inline
# is a few MB; a code cell, even with pasted data, far less than the cell limit.
MAX_NOTEBOOK_BYTES = 64 * 2**20
MAX_CELL_CHARS = 5 * 2**20
MAX_ZIP_NOTEBOOKS = 200
MAX_ZIP_BYTES = 256 * 2**20  # all notebooks of one zip, unpacked



@dataclass
class Notebook:
    path: str
    chapter: str = None
    cells: list = field(default_factory=list)  # cells as dicts: type, source, grade_id, index, problem
    error: str = None  # why the notebook could not be read
    sha: str = ""


@dataclass
class Submission:
    id: str
    notebooks: list
    path: str = ""
    notes: list = field(default_factory=list)  # added to the notes of every task record


class NotebookProblem(Exception):
    """A notebook file that cannot be graded; the message is shown to the student."""


# ------------------------------------------------------------------------------------------
# Submissions
# ------------------------------------------------------------------------------------------

def discover(paths, unpack_dir):
    """All submissions under the given paths, in a stable order.

    A path that does not exist is the instructor's typo and stops the run; anything wrong
    inside one submission is confined to it.
    """
    found = []
    for path in paths:
        path = os.path.abspath(path)
        if os.path.isdir(os.path.join(path, "submitted")):
            path = os.path.join(path, "submitted")
        if os.path.isdir(path):
            found += [_confined(entry, unpack_dir) for entry in _entries(path)]
        elif os.path.lexists(path):
            found.append(_confined(path, unpack_dir))
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return _unique_ids(found)


def _entries(folder):
    """The submissions lying in a folder given to the grader: sub-folders, notebooks, zips."""
    entries = []
    for name in sorted(os.listdir(folder)):
        full = os.path.join(folder, name)
        if name.startswith(".") or name == "__MACOSX":  # hidden files, macOS archive leftovers
            continue
        if os.path.isdir(full) or name.lower().endswith((".ipynb", ".zip")):
            entries.append(full)
    return entries


def _confined(path, unpack_dir):
    """The submission at `path`; whatever goes wrong reading it stays with it."""
    try:
        return _submission_at(path, unpack_dir)
    except Exception as exc:  # noqa: BLE001 - last resort: one submission must not stop the batch
        error = f"the grader could not read this submission ({type(exc).__name__}: {exc})"
        return Submission(_submission_id(path), [_failed(path, error)], path=path)


def _submission_at(path, unpack_dir):
    name = _submission_id(path)
    if os.path.isdir(path):
        return Submission(name, _notebooks_under(path), path=path)
    if path.lower().endswith(".zip"):
        return Submission(name, _notebooks_in_zip(path, unpack_dir), path=path)
    return Submission(name, [read_notebook(path)], path=path)


def _submission_id(path):
    name = os.path.basename(path.rstrip(os.sep))
    if not os.path.isdir(path):
        name = os.path.splitext(name)[0]
    return readable(name) or "submission"


def _unique_ids(submissions):
    """Give a later submission with an already used name a numbered name, and say so in both."""
    by_id = {}
    for submission in submissions:
        if submission.id not in by_id:
            by_id[submission.id] = submission
            continue
        first, number = by_id[submission.id], 2
        while f"{submission.id} ({number})" in by_id:
            number += 1
        renamed = f"{submission.id} ({number})"
        submission.notes.append(f"two submissions are named {submission.id!r}: this one "
                                f"({readable(submission.path)}) is graded as {renamed!r}")
        first.notes.append(f"two submissions are named {first.id!r}: this one ({readable(first.path)}) "
                           f"keeps the name, the other is graded as {renamed!r}")
        submission.id = renamed
        by_id[renamed] = submission
    return submissions


def _failed(path, error):
    return Notebook(path, chapter=_chapter_from_path(path), error=error)


def _notebooks_under(folder):
    """The notebooks of a submission folder; links that leave the folder are not followed."""
    root = os.path.realpath(folder)
    notebooks = []

    def unreadable_folder(exc):
        where = os.path.relpath(exc.filename, folder) if exc.filename else "."
        notebooks.append(_failed(exc.filename or folder,
                                 f"the folder {readable(where)!r} of this submission could not be read "
                                 f"({exc.strerror or exc})"))

    for here, dirs, files in os.walk(folder, onerror=unreadable_folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
        for name in sorted(files):
            if name.lower().endswith(".ipynb") and not name.startswith("."):
                notebooks.append(_notebook_inside(os.path.join(here, name), root))
    return notebooks


def _notebook_inside(path, root):
    if not _is_inside(os.path.realpath(path), root):
        return _failed(path, "the notebook is a link to a file outside the submission "
                             "(the grader reads only files inside it)")
    return read_notebook(path)


def _is_inside(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _notebooks_in_zip(path, unpack_dir):
    """Unpack a zip's notebooks (nothing else) into a folder of its own and read them."""
    name = os.path.splitext(os.path.basename(path))[0]
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:10]
    target = os.path.join(unpack_dir, f"{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}-{digest}")
    shutil.rmtree(target, ignore_errors=True)  # a resumed run unpacks again: no stale files
    try:
        too_large = _unpack_notebooks(path, target)
    except zipfile.BadZipFile as exc:
        return [_failed(path, f"the .zip file is damaged ({exc})")]
    except (OSError, RuntimeError, NotImplementedError, EOFError, ValueError, zipfile.LargeZipFile) as exc:
        # RuntimeError: encrypted; NotImplementedError: an unknown compression method
        return [_failed(path, f"the .zip file could not be unpacked ({type(exc).__name__}: {exc})")]
    return _notebooks_under(target) + [
        _failed(os.path.join(target, member), _too_large_message(size)) for member, size in too_large]


def _unpack_notebooks(path, target):
    """Extract the .ipynb members; return (name, size) of those too large to be read."""
    root = os.path.realpath(target)
    with zipfile.ZipFile(path) as archive:
        members = [m for m in archive.infolist() if not m.is_dir() and m.filename.lower().endswith(".ipynb")]
        if len(members) > MAX_ZIP_NOTEBOOKS:
            raise zipfile.BadZipFile(f"it holds {len(members)} notebooks; a submission has a few")
        unpacked = sum(m.file_size for m in members if m.file_size <= MAX_NOTEBOOK_BYTES)
        if unpacked > MAX_ZIP_BYTES:
            raise zipfile.BadZipFile(f"its notebooks would unpack to {unpacked / 2**20:.0f} MB; the grader "
                                     f"unpacks up to {MAX_ZIP_BYTES // 2**20} MB per submission")
        too_large = []
        for member in members:
            if not _is_inside(os.path.realpath(os.path.join(target, member.filename)), root):
                raise zipfile.BadZipFile(f"unsafe path in archive: {member.filename}")
            if member.file_size > MAX_NOTEBOOK_BYTES:
                too_large.append((member.filename, member.file_size))
            else:
                archive.extract(member, target)  # a member never yields more than its file_size
    return too_large


def graded_notebooks(submission):
    """Notebooks of known chapters; the last one wins when a chapter appears twice, except
    that a notebook that cannot be read never replaces one that can (a broken backup copy
    must not hide the real work)."""
    by_chapter = {}
    for notebook in submission.notebooks:
        earlier = by_chapter.get(notebook.chapter)
        if notebook.chapter and not (notebook.error and earlier and not earlier.error):
            by_chapter[notebook.chapter] = notebook
    return list(by_chapter.values())


# ------------------------------------------------------------------------------------------
# Notebooks
# ------------------------------------------------------------------------------------------

def read_notebook(path):
    """The notebook at `path`, with `error` set when it cannot be graded at all."""
    notebook = Notebook(path, chapter=_chapter_from_path(path))
    try:
        raw = _read_capped(path)
        notebook.sha = hashlib.sha256(raw).hexdigest()
        cells, metadata = _cells_and_metadata(_parse_json(raw))
        notebook.cells = [_plain_cell(cell, index) for index, cell in enumerate(cells, 1) if isinstance(cell, dict)]
    except NotebookProblem as problem:
        notebook.error = str(problem)
        return notebook
    except Exception as exc:  # noqa: BLE001 - last resort: the submission's other notebooks still count
        notebook.error = f"the grader could not read this notebook ({type(exc).__name__}: {exc})"
        notebook.cells = []
        return notebook
    notebook.chapter = _first_graded_chapter(
        _chapter_from_metadata(metadata), _chapter_from_grade_ids(notebook.cells), notebook.chapter)
    return notebook


def _read_capped(path):
    """The file's bytes; only regular files, and no more than MAX_NOTEBOOK_BYTES."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise NotebookProblem("the notebook is not a regular file (a folder, a device or a pipe?)")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise NotebookProblem(_too_large_message(info.st_size))
        with open(path, "rb") as f:
            raw = f.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as exc:
        raise NotebookProblem(f"the notebook file could not be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_NOTEBOOK_BYTES:  # it grew after stat
        raise NotebookProblem(_too_large_message(len(raw)))
    return raw


def _too_large_message(size):
    return (f"the notebook file is too large to grade ({size / 2**20:.0f} MB; the grader reads notebooks "
            f"up to {MAX_NOTEBOOK_BYTES // 2**20} MB): clear the outputs and save it again")


def _parse_json(raw):
    if not raw.strip():
        raise NotebookProblem("the notebook file is empty")
    encoding = json.detect_encoding(raw)  # utf-8, utf-8-sig, utf-16(-le/-be) or utf-32(-le/-be)
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise NotebookProblem(
            f"the notebook file is not {encoding.upper().replace('-SIG', '')} text (byte 0x{raw[exc.start]:02x} "
            f"at offset {exc.start}); Jupyter saves notebooks as UTF-8: open it in Jupyter and save it again"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookProblem(f"the notebook file is not valid notebook JSON ({exc.msg} at line {exc.lineno}, "
                              f"column {exc.colno})") from None
    except RecursionError:
        raise NotebookProblem("the notebook file is not valid notebook JSON (nested too deeply to read)") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise NotebookProblem(f"the notebook file is not valid notebook JSON ({exc})") from None
    if not isinstance(data, dict):
        raise NotebookProblem(f"the notebook file is not valid notebook JSON (it holds {_kind(data)}, "
                              f"not an object with 'cells')")
    return data


def _cells_and_metadata(data):
    if _is_old_format(data):
        data = _upgraded(data)
    cells = data.get("cells")
    if not isinstance(cells, list):
        what = "no 'cells'" if cells is None else f"'cells' as {_kind(cells)}, not a list"
        raise NotebookProblem(f"the notebook file is not valid notebook JSON (it has {what})")
    metadata = data.get("metadata")
    return cells, metadata if isinstance(metadata, dict) else {}


def _is_old_format(data):
    version = data.get("nbformat")
    if isinstance(version, int) and not isinstance(version, bool) and version < 4:
        return True
    return "cells" not in data and "worksheets" in data  # nbformat 3 keeps its cells in worksheets


def _upgraded(data):
    """An nbformat 1-3 notebook converted to nbformat 4, as Jupyter does when it opens one."""
    import nbformat

    try:
        return nbformat.converter.convert(nbformat.from_dict(data), 4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds on malformed old notebooks
        raise NotebookProblem(
            f"the notebook is in the old format nbformat {data.get('nbformat')!r} and could not be converted "
            f"({type(exc).__name__}: {exc}); open it in a current Jupyter and save it again") from None


def _kind(value):
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number")


def _plain_cell(cell, index):
    """A cell as the grader uses it; `problem` says why it cannot be graded (None: it can)."""
    grade_id = conventions.grade_id(cell) or None
    cell_type = cell.get("cell_type") if isinstance(cell.get("cell_type"), str) else None
    source, problem = _source_text(cell.get("source", ""))
    where = f"cell {index} of the notebook" + (f" ({readable(grade_id)})" if grade_id else "")
    return {"type": cell_type, "source": source, "grade_id": grade_id, "index": index,
            "problem": f"{where} {problem}" if problem else None}


def _source_text(source):
    """(text, problem) of a cell's source, which nbformat stores as a string or a list of lines."""
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    elif isinstance(source, list):
        wrong = next(line for line in source if not isinstance(line, str))
        return "", f"is damaged: its source lists {_kind(wrong)} where the notebook format has lines of text"
    elif not isinstance(source, str):
        return "", f"is damaged: its source is {_kind(source)} where the notebook format has text"
    if len(source) > MAX_CELL_CHARS:
        return "", (f"is too large to grade ({len(source) / 2**20:.1f} MB of text; the grader reads cells up "
                    f"to {MAX_CELL_CHARS // 2**20} MB)")
    return source, _unreadable_character(source)


def _unreadable_character(source):
    """Why Python cannot read `source` as text, or None."""
    surrogate = _LONE_SURROGATE.search(source)
    if surrogate:
        return (f"contains U+{ord(surrogate.group()):04X}, a lone surrogate (half of a character that was cut "
                f"in two, not valid text) on line {_line_of(source, surrogate.start())}: Python cannot read "
                f"the cell; delete that character and save the notebook again")
    if "\0" in source:
        return (f"contains a NUL character (U+0000) on line {_line_of(source, source.index(chr(0)))}: "
                f"Python cannot read the cell; delete that character and save the notebook again")
    return None


def _line_of(text, position):
    return text.count("\n", 0, position) + 1


def _chapter_from_metadata(metadata):
    course = metadata.get("gptcourse")
    chapter = course.get("chapter") if isinstance(course, dict) else None
    return chapter if isinstance(chapter, str) else None


def _chapter_from_grade_ids(cells):
    """The chapter of the first task or check cell; carry-over cells hold EARLIER chapters' tasks."""
    for cell in cells:
        task = task_of_cell(cell["grade_id"])
        if task and not conventions.is_kind(cell["grade_id"], conventions.CARRY):
            return task.chapter
    return None


def _chapter_from_path(path):
    """The chapter named by the file, else by its folder (nbgrader's <student>/<assignment>/)."""
    for name in (os.path.basename(path), os.path.basename(os.path.dirname(path))):
        for chapter in chapter_names():
            if chapter in name or name.startswith(chapter[:3]):
                return chapter
    return None


def _first_graded_chapter(*candidates):
    return next((c for c in candidates if c in chapter_names()), None)


# ------------------------------------------------------------------------------------------
# Cells
# ------------------------------------------------------------------------------------------

def find_task_cell(notebook, task_id):
    """(source, note) of the cell that holds the task's solution, or (None, why not)."""
    task = get_task(task_id)
    code = [c for c in notebook.cells if c["type"] == "code"]
    tagged = [c for c in code if c["grade_id"] == task.solution_cell_id]
    for cell in reversed(tagged):
        if _cell_defines(cell, task.names):
            return cell["source"], None
    defining = [c for c in code if _cell_defines(c, task.names)]
    if defining:
        note = (f"the solution of task {task_id} was not in its own cell ({task.solution_cell_id}); "
                f"graded the last cell that defines {', '.join(task.names)}")
        return defining[-1]["source"], note
    if tagged and tagged[-1]["problem"]:
        return None, tagged[-1]["problem"]
    if tagged:
        return tagged[-1]["source"], None  # defines nothing parseable: the worker says why
    return None, (f"no cell defines {', '.join(task.names)} (the solution cell {task.solution_cell_id} "
                  f"is missing)")


def _cell_defines(cell, names):
    """Whether the cell defines all `names` at top level; the parse is done once per cell."""
    if "defined" not in cell:
        cell["defined"] = frozenset() if cell["problem"] else _top_level_names(cell["source"])
    return all(name in cell["defined"] for name in names)


def _top_level_names(source):
    try:
        tree = ast.parse(_without_magics(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # MemoryError: CPython's parser reports a too deeply nested expression that way
        return frozenset()
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(defined)


def _without_magics(source):
    return re.sub(r"^(\s*)[%!].*$", r"\1pass", source, flags=re.MULTILINE)


def check_cell_note(notebook, task_id, released_check_source):
    """A note when the task's check cell was deleted or edited (the grade never depends on it)."""
    task = get_task(task_id)
    cells = [c for c in notebook.cells if c["grade_id"] == task.check_cell_id]
    if not cells:
        return f"the check cell of task {task_id} was deleted (this does not change the grade)"
    if all(c["source"].strip() != str(released_check_source).strip() for c in cells):
        return f"the check cell of task {task_id} was edited (ignored: the grader runs its own tests)"
    return None
