"""Bring your own code from an earlier chapter's notebook into this one.

Chapter 03 builds on the CausalAttention class you wrote in chapter 02. Its carry-over cell

    from gptcourse.carry import carry_over
    globals().update(carry_over("2.5"))

looks for 02_attention.ipynb in the folder of the running notebook, runs that notebook's
setup cells, its own carry-over cells and its task cells up to Task 2.5 (nothing else: no
plots, no demos, no checks) in a fresh namespace, runs the self-check of Task 2.5 on the
class it defined, and says what happened in one line. It reads the notebook as last saved,
so save chapter 02 first. (An earlier notebook's own carry-over cells run because its tasks
may use what they bring: carrying Task 3.1 from chapter 03 brings CausalAttention from the
chapter 02 notebook beside it, too.)

Without that notebook (on Colab, say) it asks you to paste the class into the next cell,
which ends with `check_pasted("2.5", globals())`: the same self-check on what you pasted.

Grading never uses what comes in this way: the grader uses a correct reference for the
earlier chapters' names, so a mistake in chapter 02 costs points only once. Under nbgrader
(where the course's hidden reference package is installed) both cells therefore bind the
reference versions themselves: a task cell that uses an earlier class when it is *defined*
(`class KVCacheMultiHeadAttention(MultiHeadAttention)`) then gets the same base class from
nbgrader as from the course grader, whatever the submission's folder holds or its paste cell
says. The course's nbgrader configuration names the module that holds the reference in the
environment variable GPTCOURSE_REFERENCE_MODULE; this package never imports it by name.
"""
import contextlib
import importlib
import io
import json
import linecache
import os
import sys
import types

from .checking import conventions
from .checking.selfcheck import SelfCheckFailed, check
from .checking.tasks import carried_tasks, get_task, tasks_of
from .messages import say

# Set by the course's nbgrader configuration: the module whose reference_object(task_id, name)
# gives the versions of earlier tasks that grading uses.
REFERENCE_MODULE_ENV_VAR = "GPTCOURSE_REFERENCE_MODULE"

# name -> (object, where it came from): what carry_over brought, for check_pasted.
_CARRIED = {}
# The folders of the notebooks being carried from, innermost last: a carry-over cell of an
# earlier notebook looks beside that notebook, not in the current directory.
_CARRYING_FROM = []


class CellFailed(Exception):
    """A cell of the earlier notebook raised while it ran; the message says which and why."""


def carry_over(*task_ids, folder=None):
    """Your graded names of earlier tasks, from their notebooks: {name: object}.

    `task_ids`: tasks of earlier chapters ("2.5", ...). `folder`: where to look for the
    notebooks (default: the current directory, which is the running notebook's folder).
    Prints one line per chapter; a name that could not be brought is left out.
    """
    graded = _reference_when_graded(task_ids)
    if graded is not None:
        return graded
    found = {}
    for chapter, tasks in _by_chapter(task_ids).items():
        here = folder or (_CARRYING_FROM[-1] if _CARRYING_FROM else os.getcwd())
        path = os.path.join(here, f"{chapter}.ipynb")
        names = _names(tasks)
        if not os.path.isfile(path):
            say(f"No {chapter}.ipynb in this folder: paste your {names} from it into the next "
                f"cell and run that cell.")
            continue
        try:
            namespace = _run_task_cells(path, chapter, tasks)
        except CellFailed as failure:
            say(f"Could not bring {names} from {chapter}.ipynb: {failure}. Fix it there and save "
                f"the notebook, then run this cell again (or paste {names} into the next cell).")
            continue
        brought = {name: namespace[name] for task in tasks for name in task.names}
        for name, obj in brought.items():
            _CARRIED[name] = (obj, f"{chapter}.ipynb")
        found.update(brought)
        say(f"Brought {names} from {chapter}.ipynb; {_verdict(tasks, brought, namespace)}")
    return found


def check_pasted(task_id, namespace):
    """The end of the paste cell: runs the self-check of `task_id` on what was pasted."""
    task = get_task(task_id)
    graded = _reference_when_graded([task_id])
    if graded is not None:
        namespace.update(graded)  # whatever was pasted: the grader grades with the reference
        return
    names = ", ".join(task.names)
    missing = [name for name in task.names if name not in namespace]
    if missing:
        say(f"Nothing pasted: paste your {names} (Task {task.id}) into this cell, above this line, "
            f"and run it again.")
        return
    carried = [_CARRIED[name][1] for name in task.names
               if name in _CARRIED and namespace[name] is _CARRIED[name][0]]
    if carried:
        say(f"{names} came from {carried[0]} (the cell above): nothing to paste here.")
        return
    say(f"Pasted {names}; {_verdict([task], namespace, namespace)}")


def _reference_when_graded(task_ids):
    """While nbgrader grades this notebook: {name: reference object} for the tasks' graded names
    and helpers, after one line that says so; otherwise (or without the hidden reference
    package) None."""
    from .notebook import being_graded

    module_name = os.environ.get(REFERENCE_MODULE_ENV_VAR)
    if not being_graded() or not module_name:  # not graded, or nbgrader without the course's config
        return None
    reference_object = importlib.import_module(module_name).reference_object
    tasks = [get_task(task_id) for task_id in task_ids]
    found = {name: reference_object(task.id, name) for task in tasks for name in task.carried_names}
    say(f"Graded by nbgrader: {', '.join(found)} are the course's reference versions here, as in the "
        f"course grader (a mistake in an earlier chapter costs points only once).")
    return found


def _by_chapter(task_ids):
    """{chapter: [tasks]} in course order."""
    grouped = {}
    for task_id in task_ids:
        task = get_task(task_id)
        grouped.setdefault(task.chapter, []).append(task)
    return grouped


def _names(tasks):
    return ", ".join(name for task in tasks for name in task.names)


def _verdict(tasks, objects, namespace):
    """'its self-check passed.' or what failed, in one line.

    objects: the graded names to check; namespace: where the earlier names they use live.
    """
    for task in tasks:
        earlier = {name: namespace[name] for t in carried_tasks(task.id) for name in t.carried_names
                   if name in namespace}
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # check() prints its own line
                check(task.id, *[objects[name] for name in task.names], earlier=earlier)
        except SelfCheckFailed as failure:
            detail = " ".join(str(failure).split())
            return f"its self-check FAILED: {detail} This notebook's checks may fail because of it."
    return "its self-check passed."


def setup_and_carried_names(path):
    """What a saved notebook's setup, carry-over and paste cells define, and what they printed:
    (namespace, printed text). No task, demo, plot or check cell runs.

    For a program that needs the earlier chapters' code a notebook brings in, as the notebook
    had it when it was saved: `gptcourse.ddp_pretrain` takes the GPTModel of a saved chapter 05
    notebook this way (brought from 04_gpt_model.ipynb beside it, or pasted into its paste cell).
    Its carry-over cells print one message each, as in the notebook ("Brought GPTModel from ...",
    "No 04_gpt_model.ipynb in this folder: ..."): they are returned, not printed, one line per
    cell (without the line breaks a notebook shows them with). Raises CellFailed when one of the
    cells raises.
    """
    return _run_notebook_cells(path, os.path.splitext(os.path.basename(path))[0], wanted={})


def _run_task_cells(path, chapter, tasks):
    """Run the notebook's setup, carry-over and paste cells and its task cells up to the
    last of `tasks`, in order.

    The earlier task cells run too, because a later task may use them (your CausalAttention
    may call your causal_attention_weights). What the cells print is swallowed.
    """
    chapter_tasks = [task.id for task in tasks_of(chapter)]
    last = max(chapter_tasks.index(task.id) for task in tasks)
    wanted = {conventions.grade_id_for(conventions.SOLUTION, task_id): task_id for task_id in chapter_tasks[:last + 1]}
    namespace, _ = _run_notebook_cells(path, chapter, wanted)
    missing = [name for task in tasks for name in task.names if name not in namespace]
    if missing:
        raise CellFailed(f"it does not define {', '.join(missing)}")
    return namespace


def _run_notebook_cells(path, chapter, wanted):
    """Run the setup, carry-over and paste cells of the notebook at `path` and its task cells
    whose grade ids are in `wanted` ({grade id: task id}), in a fresh module:
    (its namespace, what the carry-over and paste cells printed)."""
    with open(path, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    module = types.ModuleType(f"gptcourse_carried_{chapter}")
    module.__file__ = path
    sys.modules[module.__name__] = module  # for code that looks its module up (dataclasses)
    _CARRYING_FROM.append(os.path.dirname(os.path.abspath(path)))
    try:
        printed = _run_cells(cells, wanted, chapter, module)
    finally:
        _CARRYING_FROM.pop()
    return module.__dict__, printed


def _run_cells(cells, wanted, chapter, module):
    """Run the cells that carry_over needs; returns what the carry-over and paste cells printed,
    a line per cell."""
    printed = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        grade_id, tags = conventions.grade_id(cell), conventions.tags(cell)
        if conventions.SETUP_TAG in tags:
            label = "setup cell"
        elif conventions.is_kind(grade_id, conventions.CARRY) or conventions.PASTE_TAG in tags:
            label = "carry-over cell"
        elif grade_id in wanted:
            label = f"Task {wanted[grade_id]} cell"
        else:
            continue
        filename = f"<{chapter}.ipynb, cell {cell.get('id', index)}>"
        output = _run_cell(_source(cell), module.__dict__, filename, label)
        if label == "carry-over cell" and output.strip():
            printed.append(" ".join(output.split()) + "\n")  # its message, without the page's line breaks
    return "".join(printed)


def _run_cell(source, namespace, filename, label):
    """Run one cell's code in `namespace`; returns what it printed (never shown as it runs)."""
    code = _python(source)
    # Registered with linecache so that tracebacks and the self-check can quote its lines.
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(code, filename, "exec"), namespace)
    except Exception as error:  # noqa: BLE001 - the student's cell may raise anything
        line = error.lineno if isinstance(error, SyntaxError) else _line_in(error, filename)
        where = f" at line {line}" if line else ""
        text = error.msg if isinstance(error, SyntaxError) else str(error)
        message = f": {text}" if text else ""
        raise CellFailed(f"its {label} raised {type(error).__name__}{where}{message}") from None
    return printed.getvalue()


def _python(source):
    """Cell source as plain Python: IPython's %magics and !commands translated when possible."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    return TransformerManager().transform_cell(source)


def _line_in(error, filename):
    tb, line = error.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _source(cell):
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source
