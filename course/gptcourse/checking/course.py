"""The course as plain data: its chapters, in order, and the graded tasks of each.

One row per graded task: its id, the names its solution cell must define, its level and title,
and what it needs from earlier tasks. Nothing about how a task is checked: that is in the
chapter's modules (`gptcourse/checking/chapters/chNN_name.py`, `grader/chapters/chNN_name.py`),
and what those checks pin down and leave free is in `contract.py` beside this module; the two
together, with each task's signatures and where its pieces live, are docs/contract.md
(`python -m grader where <task>` prints one task's part).
This module imports nothing heavy (no torch), so that reading a title or a task list is
instant: the grader's export, report and nbgrader commands and the build read it.

Adding a chapter adds one `Chapter(...)` entry to COURSE, in course order, and its tasks'
entries to contract.py (docs/authoring.md).
Tests add a toy chapter with `register_chapter` and take it away with `unregister_chapter`.
"""
from dataclasses import dataclass, replace

from . import conventions


@dataclass(frozen=True)
class Task:
    id: str  # "<chapter number>.<task number>", as the notebook's "### Task" heading and docs/contract.md say it
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
    def solution_cell_id(self):
        return conventions.grade_id_for(conventions.SOLUTION, self.id)

    @property
    def check_cell_id(self):
        return conventions.grade_id_for(conventions.CHECK, self.id)


def task(task_id, names, level, title, needs=(), helpers=()):
    """A row of a chapter's task list; the chapter fills in its own name."""
    return Task(task_id, "", tuple(names), level, title, tuple(needs), tuple(helpers))


@dataclass(frozen=True)
class Chapter:
    name: str  # "02_attention": the notebook is course/02_attention.ipynb
    title: str  # "Attention and causal masking"
    budget_seconds: int  # top to bottom on two quiet CPU cores: what the README promises
    tasks: tuple  # Task rows, in order (made with task(...))

    def __post_init__(self):
        rows = tuple(row if row.chapter else replace(row, chapter=self.name) for row in self.tasks)
        for row in rows:
            if row.chapter != self.name:
                raise ValueError(f"task {row.id} is listed in chapter {self.name} but says {row.chapter}")
        object.__setattr__(self, "tasks", rows)

    @property
    def number(self):
        return self.name.split("_")[0]

    @property
    def heading(self):
        """'Chapter 02 — Attention and causal masking': the first line of the chapter's notebook."""
        return f"Chapter {self.number} — {self.title}"


COURSE = (
    Chapter("01_text_data", "Working with text data", 120, (
        task("1.1", ("SimpleTokenizerV2",), "B", "A tokenizer with a vocabulary"),
        task("1.2", ("build_vocab",), "B", "Building the vocabulary"),
        task("1.3", ("GPTDatasetV1",), "I", "A sliding-window dataset"),
        task("1.4", ("create_dataloader_v1",), "I", "A data loader over GPT-2 tokens", needs=("1.3",)),
        task("1.5", ("embed",), "B", "Token and position embeddings"),
    )),
    Chapter("02_attention", "Attention and causal masking", 120, (
        task("2.1", ("simple_self_attention",), "B", "Self-attention without trainable weights"),
        task("2.2", ("SelfAttention_v1",), "B", "Self-attention with weight matrices"),
        task("2.3", ("SelfAttention_v2",), "I", "Self-attention with nn.Linear layers"),
        task("2.4", ("causal_attention_weights",), "I", "Causal attention weights"),
        task("2.5", ("CausalAttention",), "A", "A causal attention module"),
    )),
    Chapter("03_multihead_attention", "Multi-head attention", 120, (
        task("3.1", ("MultiHeadAttentionWrapper",), "I", "Multi-head attention by stacking heads", needs=("2.5",)),
        task("3.2", ("MultiHeadAttention",), "A", "Multi-head attention with split heads"),
    )),
    Chapter("04_gpt_model", "A GPT model", 300, (
        task("4.1", ("LayerNorm",), "B", "Layer normalization"),
        task("4.2", ("GELU",), "B", "The GELU activation"),
        task("4.3", ("FeedForward",), "B", "The feed-forward network", needs=("4.2",)),
        task("4.4", ("TransformerBlock",), "I", "The transformer block", needs=("3.2", "4.1", "4.3")),
        task("4.5", ("GPTModel",), "I", "The GPT model", needs=("4.1", "4.4")),
        task("4.6", ("generate_text_simple",), "B", "Greedy text generation"),
    )),
    Chapter("05_pretraining", "Pretraining", 300, (
        task("5.1", ("text_to_token_ids", "token_ids_to_text"), "B", "Text to token ids and back"),
        task("5.2", ("calc_loss_batch",), "I", "The loss of a batch", needs=("4.5",)),
        task("5.3", ("calc_loss_loader",), "I", "The loss over a data loader", needs=("5.2",)),
        task("5.4", ("train_model_simple",), "A", "The training loop", needs=("4.5", "4.6", "5.1", "5.3"),
             helpers=("evaluate_model", "generate_and_print_sample")),
        task("5.5", ("save_checkpoint", "load_checkpoint"), "I", "Saving and loading a checkpoint", needs=("4.5",)),
        task("5.6", ("load_weights_into_gpt",), "A", "Loading OpenAI's GPT-2 weights", needs=("4.5",)),
        task("5.7", ("lr_at_step", "train_model"), "A", "Warmup, cosine decay and gradient clipping",
             needs=("4.5", "4.6", "5.1", "5.3", "5.4")),
    )),
    Chapter("06_sampling", "Decoding and sampling", 300, (
        task("6.1", ("softmax_with_temperature",), "B", "Softmax with a temperature"),
        task("6.2", ("top_k_logits",), "I", "Top-k filtering"),
        task("6.3", ("top_p_logits",), "A", "Top-p (nucleus) filtering"),
        task("6.4", ("generate",), "I", "Generating with temperature, top-k, top-p and an end token",
             needs=("6.1", "6.2", "6.3")),
        task("6.5", ("KVCacheMultiHeadAttention",), "A", "A key-value cache", needs=("3.2",)),
    )),
    Chapter("07_classification", "Fine-tuning for classification", 300, (
        task("7.1", ("create_balanced_dataset", "random_split"), "B", "Balancing and splitting the messages"),
        task("7.2", ("SpamDataset",), "I", "A dataset of padded messages"),
        task("7.3", ("add_classification_head",), "I", "A classification head, and what to train", needs=("4.5",)),
        task("7.4", ("calc_accuracy_loader", "calc_loss_batch_cls"), "I", "Loss and accuracy from the last token",
             needs=("4.5",)),
        task("7.5", ("classify_text",), "B", "Classifying a new message", needs=("4.5",)),
    )),
    Chapter("08_lora", "Parameter-efficient fine-tuning with LoRA", 300, (
        task("8.1", ("LoRALayer",), "I", "The low-rank update"),
        task("8.2", ("LinearWithLoRA",), "I", "A linear layer with LoRA", needs=("8.1",)),
        task("8.3", ("replace_linear_with_lora",), "A", "LoRA everywhere", needs=("4.5", "8.2")),
    )),
    Chapter("09_instruction", "Instruction fine-tuning", 300, (
        task("9.1", ("format_input",), "B", "An instruction in the Alpaca format"),
        task("9.2", ("custom_collate_fn",), "A", "Padding, shifting and masking a batch"),
    )),
)

# ------------------------------------------------------------------------------------------
# The registry: COURSE, plus any chapter a test registers
# ------------------------------------------------------------------------------------------

_REGISTERED = list(COURSE)
_INDEX = {}  # {"tasks": (...), "by_id": {...}}: rebuilt when the registry changes


def register_chapter(chapter):
    """Add a chapter after the others (a test's toy chapter); returns it."""
    if any(known.name == chapter.name for known in _REGISTERED):
        raise ValueError(f"chapter {chapter.name!r} is registered already")
    taken = {t.id for t in all_tasks()}
    for row in chapter.tasks:
        if row.id in taken:
            raise ValueError(f"task {row.id} of chapter {chapter.name} is already a task of the course")
        taken.add(row.id)
    _REGISTERED.append(chapter)
    _INDEX.clear()
    return chapter


def unregister_chapter(name):
    """Take away a chapter that register_chapter added (the course's own cannot be)."""
    if any(known.name == name for known in COURSE):
        raise ValueError(f"chapter {name!r} is part of the course")
    _REGISTERED[:] = [known for known in _REGISTERED if known.name != name]
    _INDEX.clear()


def _index():
    if not _INDEX:
        tasks = tuple(row for chapter in _REGISTERED for row in chapter.tasks)
        _INDEX.update(tasks=tasks, by_id={row.id: row for row in tasks})
    return _INDEX


# ------------------------------------------------------------------------------------------
# Questions about the course
# ------------------------------------------------------------------------------------------

def chapters():
    """Every chapter, in course order."""
    return tuple(_REGISTERED)


def chapter_names():
    return tuple(chapter.name for chapter in _REGISTERED)


def get_chapter(name):
    for chapter in _REGISTERED:
        if chapter.name == name:
            return chapter
    raise KeyError(f"unknown chapter {name!r}; the chapters are {', '.join(chapter_names())}")


def all_tasks():
    """Every task, in course order."""
    return _index()["tasks"]


def get_task(task_id):
    try:
        return _index()["by_id"][str(task_id)]
    except KeyError:
        known = ", ".join(_index()["by_id"])
        raise KeyError(f"unknown task {task_id!r}; the graded tasks are {known}") from None


def tasks_of(chapter):
    return [row for row in all_tasks() if row.chapter == chapter]


def task_of_cell(grade_id):
    """The task of a cell's nbgrader grade_id (task_<slug>, check_<slug>, carry_<slug>), or None."""
    kind, task_id = conventions.parse_grade_id(grade_id)
    return _index()["by_id"].get(task_id) if kind else None


def tasks_before(task_id):
    """Every task that comes before `task_id` in the course, in order."""
    tasks = all_tasks()
    ids = [row.id for row in tasks]
    return list(tasks[: ids.index(get_task(task_id).id)])


def carried_tasks(task_id):
    """The earlier tasks whose graded names are bound (to the reference) when `task_id` runs.

    Those are the task's own chapter's earlier tasks (a student may call them: the notebook
    defines them) and its `needs`, and, transitively, what each of those needs. In course
    order. Nothing else: a chapter-03 task does not carry every chapter-02 name.
    """
    this = get_task(task_id)
    earlier_ids = {row.id for row in tasks_before(this.id)}
    wanted = [row.id for row in tasks_before(this.id) if row.chapter == this.chapter] + list(this.needs)
    found = set()
    while wanted:
        current = wanted.pop()
        if current in found:
            continue
        if current not in earlier_ids:
            raise ValueError(f"task {this.id} needs {current}, which is not an earlier task")
        found.add(current)
        wanted.extend(get_task(current).needs)
    return [row for row in all_tasks() if row.id in found]


def chapters_for(task_id):
    """The chapters whose setup cells must run before `task_id`'s code (and the names it carries)."""
    involved = {get_task(task_id).chapter} | {row.chapter for row in carried_tasks(task_id)}
    return [name for name in chapter_names() if name in involved]


def __getattr__(name):
    """CHAPTERS (the chapters' names, in order), TASKS (every task) and TASKS_BY_ID ({id: task}),
    read from the registry each time, so that a registered toy chapter is in them."""
    if name == "CHAPTERS":
        return chapter_names()
    if name == "TASKS":
        return all_tasks()
    if name == "TASKS_BY_ID":
        return dict(_index()["by_id"])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
