"""Building submissions for the grader's tests: the student release with cells filled in.

Every task cell gets the reference solution (from the generated manifest) unless a test
gives other code for it, the way a student replaces the `raise NotImplementedError()` stubs.
"""
import ast
import copy
import hashlib
import json
import linecache
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gptcourse.checking.tasks import carried_tasks, chapters_for, get_task, task_of_cell

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"


# Task 2.5 written with the student's own causal_attention_weights (Task 2.4): sensible reuse.
CAUSAL_ATTENTION_REUSING_2_4 = '''\
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        attn_weights = causal_attention_weights(queries @ keys.transpose(1, 2), keys.shape[-1])
        return self.dropout(attn_weights) @ values
'''


def benchmark(name):
    """A script of benchmarks/ (`"ddp_bench"`) loaded as a module, for its smoke test to call main()."""
    import importlib.util

    module_spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def manifest():
    return json.loads((REPO / "grader" / "reference" / "manifest.json").read_text())


def load(source, task_id):
    """Run a task cell the way the grader does: setup, the carried reference names, then the cell."""
    m = manifest()
    task = get_task(task_id)
    namespace = {"__name__": "__main__"}
    for chapter in chapters_for(task_id):
        for setup in m[chapter]["setup"]:
            exec(setup, namespace)
    for earlier in carried_tasks(task_id):
        exec(m[earlier.chapter]["tasks"][earlier.id]["source"], namespace)
    exec(compiled_as_a_cell(source), namespace)
    return [namespace[name] for name in task.names]


def compiled_as_a_cell(source):
    """The cell's code compiled as a notebook's kernel compiles it: under a name of its own whose
    lines Python can show (IPython registers each cell in linecache), so that a message quotes the
    student's line as it does in the notebook."""
    filename = f"<cell {hashlib.sha1(source.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return compile(source, filename, "exec")


def one_line(text):
    """A message as one line, however the course broke it between words for the page
    (gptcourse.messages), with its line breaks and runs of spaces as single spaces."""
    return " ".join(text.split())


def release_notebook(chapter):
    return json.loads((REPO / "course" / f"{chapter}.ipynb").read_text())


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")


def filled_notebook(chapter, overrides=None, paste=True):
    """The release notebook with every task (and carry-over) cell filled in. With paste=False
    the carry-over cells stay as released: they bring the earlier tasks from the notebooks
    beside this one, as in a local checkout."""
    overrides = overrides or {}
    sources = {tid: t["source"] for m in manifest().values() for tid, t in m["tasks"].items()}
    nb = copy.deepcopy(release_notebook(chapter))
    for cell in nb["cells"]:
        gid = grade_id(cell)
        if gid.startswith("task_"):
            task_id = task_of_cell(gid).id
            cell["source"] = overrides.get(task_id, sources[task_id])
        elif gid.startswith("carry_") and paste:
            # What a student pastes on Colab: the earlier task with everything its cell uses
            # (chapter 04's GPTModel needs TransformerBlock, LayerNorm, ... and chapter 03's
            # MultiHeadAttention).
            task_id = task_of_cell(gid).id
            needed = [t.id for t in carried_tasks(task_id)] + [task_id]
            cell["source"] = overrides.get(task_id, "\n\n".join(sources[t] for t in needed))
    return nb


def without_demos(nb):
    """The notebook of a student who deleted the demo and plot cells (students may: only the
    setup, carry-over, task and check cells are graded). nbgrader runs every cell of a
    submission, so the nbgrader agreement test's students skip the demos (but for chapter 05's
    all-correct student), which the masters test runs (chapters 08 and 09 in quick mode, their
    full runs in benchmarks/masters_bench.py) and the workshop test in the quick mode nbgrader
    gets; this keeps the test's time from growing with each chapter's demos and training runs."""
    nb = copy.deepcopy(nb)
    nb["cells"] = [c for c in nb["cells"] if not {"demo", "plot"} & set(c.get("metadata", {}).get("tags", []))]
    return nb


def write_notebook(nb, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1))
    return path


@dataclass
class CorpusItem:
    task: str
    name: str
    expect: str  # wrong | correct
    keywords: tuple  # the feedback must contain at least one of them (wrong items)
    source: str
    absent: tuple = ()  # the feedback must contain none of them (advice that would mislead)
    # Files of the same task with the same symptom and another cause: the diagnosis their message
    # gives must not be given to this one (tests/course/test_messages.py).
    neighbours: tuple = ()

    @property
    def chapter(self):
        return get_task(self.task).chapter

    @property
    def id(self):
        return f"{self.task}__{self.name}"


_OPENING, _CLOSING = "([{", ")]}"


def _depth(text):
    return sum(text.count(c) for c in _OPENING) - sum(text.count(c) for c in _CLOSING)


def split_header_list(value):
    """A header's comma-separated words; a comma inside brackets that close later belongs to its
    word ("[..., -1:]", "softmax(x, dim=-1)"). A bracket that never closes ("(in") splits as usual."""
    pieces, words, i = value.split(","), [], 0
    while i < len(pieces):
        word, end = pieces[i], i
        if _depth(word) > 0:
            joined = word
            for j in range(i + 1, len(pieces)):
                joined += "," + pieces[j]
                if _depth(joined) <= 0:
                    word, end = joined, j
                    break
        if word.strip():
            words.append(word.strip())
        i = end + 1
    return words


def corpus_items():
    items = []
    for path in sorted(CORPUS.glob("*/*.py")):
        text = path.read_text()
        header = {}
        for line in text.splitlines():
            if not line.startswith("#") or ":" not in line:
                break
            key, _, value = line[1:].partition(":")
            header[key.strip()] = value.strip()
        keywords = tuple(k.lower() for k in split_header_list(header.get("keywords", "")))
        absent = tuple(k.lower() for k in split_header_list(header.get("absent", "")))
        neighbours = tuple(split_header_list(header.get("neighbour-of", "")))
        items.append(CorpusItem(path.parent.name, path.stem, header["expect"], keywords, text, absent, neighbours))
    return items


class _LocalRenamer(ast.NodeTransformer):
    """Renames the variables a function assigns (not its parameters, not globals) to `prefix`1, 2, ..."""

    def __init__(self, prefix):
        self.prefix = prefix

    def visit_FunctionDef(self, node):
        parameters = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        assigned = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                          - parameters)
        names = {old: f"{self.prefix}{i}" for i, old in enumerate(assigned, 1)}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in names:
                n.id = names[n.id]
        return node


def disguised(source, prefix="tmp"):
    """The cell as a student who copied it would hand it in to hide that: every variable its
    functions assign renamed (prefix1, prefix2, ...), its comments gone and its code laid out
    anew by ast.unparse (other quotes, spacing and line breaks)."""
    tree = _LocalRenamer(prefix).visit(ast.parse(source))
    return ast.unparse(tree) + "\n"


def run_grader(paths, out, *extra):
    """The grader's command line, as an instructor runs it; returns the task records."""
    return start_grader(paths, out, *extra).records()


def start_grader(paths, out, *extra):
    """The grader's command line started in the background, for a test with other slow work to
    do meanwhile (nbgrader's autograde of the same submissions, say)."""
    return BackgroundGrader(paths, out, *extra)


class BackgroundGrader:
    """A running `python -m grader grade`: records() waits for it and returns the task records, as
    run_grader does; stop() ends it when nothing will ask for them."""

    def __init__(self, paths, out, *extra):
        self.out = Path(out)
        self.said = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a full pipe would block the grader
        command = [sys.executable, "-m", "grader", "grade", *map(str, paths), "--out", str(out), "--quiet", *extra]
        self.process = subprocess.Popen(command, stdout=self.said, stderr=subprocess.STDOUT, text=True, cwd=REPO)

    def records(self, timeout=1800):
        try:
            returncode = self.process.wait(timeout)
        finally:
            self.stop()
        self.said.seek(0)
        said = self.said.read()
        self.said.close()
        assert returncode == 0, f"grader failed:\n{said}"
        return json.loads((self.out / "grades.json").read_text())

    def stop(self):
        """Stops the grader if it still runs (a test that failed before it asked for the records)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def records_by_submission(records):
    grouped = {}
    for record in records:
        grouped.setdefault(record["submission"], {})[record["task"]] = record
    return grouped


# A Task 2.1 that keeps allocating when called, until the memory cap stops it (the memory tests
# of nbgrader and of the hub): line 4 of its cell is where it is stopped.
FILLS_MEMORY_WHEN_CALLED = """\
def simple_self_attention(inputs):
    kept = []
    while True:
        kept.append(torch.ones(1 << 20))
"""


def statements(source):
    """How long an answer is: the statements of a cell's code, function and class lines and docstrings
    left out (the similarity report's tests and benchmark sort tasks by it)."""
    count = 0
    for node in ast.walk(ast.parse(source)):
        docstring = (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                     and isinstance(node.value.value, str))
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not docstring:
            count += 1
    return count
