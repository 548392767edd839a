"""The graded tasks of the course: one entry per task of COURSE_SPEC.md.

This table is public on purpose: it says what each task must define, nothing about how.
The self-checks, the grader and the build tools all read it, so a task's id, level and
graded names are written down exactly once.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    id: str  # "2.5"
    chapter: str  # "02_attention": also the notebook's file name without .ipynb
    names: tuple  # the graded names the task's solution cell defines
    level: str  # B(eginner), I(ntermediate) or A(dvanced)
    title: str

    @property
    def slug(self):
        """'2.5' -> '2_5', used in nbgrader grade_ids (task_2_5, check_2_5)."""
        return self.id.replace(".", "_")

    @property
    def solution_cell_id(self):
        return f"task_{self.slug}"

    @property
    def check_cell_id(self):
        return f"check_{self.slug}"


TASKS = (
    Task("2.1", "02_attention", ("simple_self_attention",), "B", "Self-attention without trainable weights"),
    Task("2.2", "02_attention", ("SelfAttention_v1",), "B", "Self-attention with weight matrices"),
    Task("2.3", "02_attention", ("SelfAttention_v2",), "I", "Self-attention with nn.Linear layers"),
    Task("2.4", "02_attention", ("causal_attention_weights",), "I", "Causal attention weights"),
    Task("2.5", "02_attention", ("CausalAttention",), "A", "A causal attention module"),
    Task("3.1", "03_multihead_attention", ("MultiHeadAttentionWrapper",), "I", "Multi-head attention by stacking heads"),
    Task("3.2", "03_multihead_attention", ("MultiHeadAttention",), "A", "Multi-head attention with split heads"),
)

TASKS_BY_ID = {task.id: task for task in TASKS}
CHAPTERS = tuple(dict.fromkeys(task.chapter for task in TASKS))


def task_of_cell(grade_id):
    """The task of a cell's nbgrader grade_id ('task_2_5', 'check_2_5', 'carry_2_5'), or None."""
    prefix, _, slug = str(grade_id or "").partition("_")
    task_id = slug.replace("_", ".")
    if prefix in ("task", "check", "carry") and task_id in TASKS_BY_ID:
        return TASKS_BY_ID[task_id]
    return None


def get_task(task_id):
    try:
        return TASKS_BY_ID[str(task_id)]
    except KeyError:
        known = ", ".join(TASKS_BY_ID)
        raise KeyError(f"unknown task {task_id!r}; the graded tasks are {known}") from None


def tasks_of(chapter):
    return [task for task in TASKS if task.chapter == chapter]


def tasks_before(task_id):
    """Every task that comes before `task_id` in the course, in order."""
    ids = [task.id for task in TASKS]
    return list(TASKS[: ids.index(get_task(task_id).id)])
