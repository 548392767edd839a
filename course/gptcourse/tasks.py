"""The graded tasks of the course: one entry per task of COURSE_SPEC.md.

This table is public on purpose: it says what each task must define, nothing about how.
The self-checks, the grader and the build tools all read it, so a task's id, level and
graded names are written down exactly once: in the task's chapter module,
`gptcourse/chapters/chNN_name.py`, found here by name from `CHAPTERS`.

Adding a chapter adds one entry to CHAPTERS; everything else lives in the chapter's own
files (see docs/authoring.md).
"""
import importlib
from dataclasses import dataclass

# The chapters, in course order. The only line a new chapter adds outside its own files.
CHAPTERS = ("01_text_data", "02_attention", "03_multihead_attention", "04_gpt_model", "05_pretraining",
            "06_sampling", "07_classification",
            "08_lora", "09_instruction")


@dataclass(frozen=True)
class Task:
    id: str  # "<chapter number>.<task number>", as in COURSE_SPEC.md
    chapter: str  # "02_attention": also the notebook's file name without .ipynb
    names: tuple  # the graded names the task's solution cell defines
    level: str  # B(eginner), I(ntermediate) or A(dvanced)
    title: str
    # Earlier tasks of OTHER chapters whose graded names this task uses (they come in through
    # the notebook's carry-over cells), and same-chapter tasks the reference itself calls.
    # Earlier tasks of the same chapter are always available, since the notebook defines them.
    needs: tuple = ()
    # Helper names the task's cell also defines (the book's evaluate_model, say) that later
    # tasks may call. Never graded, never required of the student: when a later task is
    # graded they are bound to the reference together with the graded names.
    helpers: tuple = ()

    @property
    def carried_names(self):
        """What a later task gets of this one: its graded names, then its helpers."""
        return tuple(self.names) + tuple(self.helpers)

    @property
    def slug(self):
        """The id with "_" for ".", used in nbgrader grade_ids (task_<slug>, check_<slug>)."""
        return self.id.replace(".", "_")

    @property
    def solution_cell_id(self):
        return f"task_{self.slug}"

    @property
    def check_cell_id(self):
        return f"check_{self.slug}"

    @property
    def carry_cell_id(self):
        """The grade_id of the cell that brings this task's names into a later chapter."""
        return f"carry_{self.slug}"


def chapter_module(chapter):
    """'02_attention' -> the public module gptcourse.chapters.ch02_attention."""
    if chapter not in CHAPTERS:
        raise KeyError(f"unknown chapter {chapter!r}; the chapters are {', '.join(CHAPTERS)}")
    return importlib.import_module(f"gptcourse.chapters.ch{chapter}")


def task_of_cell(grade_id):
    """The task of a cell's nbgrader grade_id (task_<slug>, check_<slug>, carry_<slug>), or None."""
    prefix, _, slug = str(grade_id or "").partition("_")
    task_id = slug.replace("_", ".")
    if prefix in ("task", "check", "carry") and task_id in _table()["TASKS_BY_ID"]:
        return _table()["TASKS_BY_ID"][task_id]
    return None


def get_task(task_id):
    try:
        return _table()["TASKS_BY_ID"][str(task_id)]
    except KeyError:
        known = ", ".join(_table()["TASKS_BY_ID"])
        raise KeyError(f"unknown task {task_id!r}; the graded tasks are {known}") from None


def tasks_of(chapter):
    return [task for task in _table()["TASKS"] if task.chapter == chapter]


def tasks_before(task_id):
    """Every task that comes before `task_id` in the course, in order."""
    tasks = _table()["TASKS"]
    ids = [task.id for task in tasks]
    return list(tasks[: ids.index(get_task(task_id).id)])


def carried_tasks(task_id):
    """The earlier tasks whose graded names are bound (to the reference) when `task_id` runs.

    Those are the task's own chapter's earlier tasks (a student may call them: the notebook
    defines them) and its `needs`, and, transitively, what each of those needs. In course
    order. Nothing else: a chapter-03 task does not carry every chapter-02 name.
    """
    task = get_task(task_id)
    earlier_ids = {t.id for t in tasks_before(task.id)}
    wanted = [t.id for t in tasks_before(task.id) if t.chapter == task.chapter] + list(task.needs)
    found = set()
    while wanted:
        current = wanted.pop()
        if current in found:
            continue
        if current not in earlier_ids:
            raise ValueError(f"task {task.id} needs {current}, which is not an earlier task")
        found.add(current)
        wanted.extend(get_task(current).needs)
    return [t for t in _table()["TASKS"] if t.id in found]


def chapters_for(task_id):
    """The chapters whose setup cells must run before `task_id`'s code (and the names it carries)."""
    involved = {get_task(task_id).chapter} | {t.chapter for t in carried_tasks(task_id)}
    return [chapter for chapter in CHAPTERS if chapter in involved]


def _load_tasks():
    """Every chapter module's TASKS, in CHAPTERS order; each task must name its own chapter."""
    tasks = []
    for chapter in CHAPTERS:
        for task in chapter_module(chapter).TASKS:
            if task.chapter != chapter:
                raise ValueError(f"task {task.id} is declared in chapter {chapter} but says {task.chapter}")
            tasks.append(task)
    return tuple(tasks)


_TABLE = {}


def _table():
    """The task table, read from the chapter modules on first use. (Lazily, because the
    chapter modules import the probe kinds, which import this module.)"""
    if not _TABLE:
        tasks = _load_tasks()
        _TABLE.update(TASKS=tasks, TASKS_BY_ID={task.id: task for task in tasks})
    return _TABLE


def __getattr__(name):
    """TASKS (every task, in course order) and TASKS_BY_ID ({id: task})."""
    if name in ("TASKS", "TASKS_BY_ID"):
        return _table()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
