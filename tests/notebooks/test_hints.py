"""Hints point the way; none of them is the finished code.

Every task's markdown cell ends with its hints in `<details>` blocks: the first points the way,
the last names the exact function and its key argument, and none of them is a line the student
would paste. This test reads the code in every hint (inline `code`, <code>code</code> and
fenced blocks) and the task's solution (the statements between the solution markers of its
`task_N_M` cell), and fails when a hint holds a *finished piece* of the solution:

- a solution statement that assigns (`shortcut = x`, `checkpoint = torch.load(...)`);
- the value a statement computes, returns or calls (the right-hand side of an assignment, a
  returned expression, a call with arguments, a loop's `range(...)`, an `if`'s condition),
  when it computes anything: a call with arguments, arithmetic, a comparison, a slice;
- any part of a solution expression with two or more such operations in it
  (`torch.sqrt(var + self.eps)`); in an [A] task any part with one (`keys.transpose(1, 2)`):
  no hint of an [A] task may be code of its solution at all.

Each piece is matched in two ways:

- as written: whitespace, comments, quote style and redundant parentheses do not matter
  (pieces are compared as Python syntax trees where the hint's code parses, and as text with
  the whitespace taken out where it does not, such as pseudo-code);
- with its operands renamed, for pieces with two or more operations and for calls with two
  arguments or more: every variable, attribute and constant-indexed operand becomes `_`,
  keeping the functions and methods called, the keyword names, the operators and the
  constants. `nn.Linear(emb, 4 * emb)` then matches the solution's
  `nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"])`, `logits.masked_fill(logits < kth, ...)` the
  solution's with `kth_largest`, `F.cross_entropy(a, b)` the solution's
  `nn.functional.cross_entropy(logits, target_batch)`, and `torch.argmax(scores, dim=-1,
  keepdim=True)` the solution's call on `logits`.

What it cannot catch, and why it does not try: the same result computed another way
(`torch.where` where the solution calls `masked_fill`); the finished expression split into
steps or inlined from two solution lines (`cumsum - sorted_probs >= p`, where the solution
names the difference first); a one-operation piece with other names (`logits < kth`): with
its operands renamed it is `_ < _`, which matches every comparison; and the finished line
spelled out in prose. Those are for the author and the reviewer: the authoring rule is in
docs/authoring.md. A bare call without arguments (`model.eval()`, `torch.no_grad()`) and a
function named without its arguments (`torch.chunk`) are allowed, as is everything in the task
text above the hints (the signature, the attributes and calls the contract pins down).
"""
import ast
import copy
import html
import io
import json
import re
import tokenize

import pytest

from factory import REPO, grade_id

MASTERS = sorted((REPO / "solutions").glob("*.ipynb"))


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def tasks_of(master):
    """task id -> (level, markdown of the task, source of its solution cell)."""
    cells = {grade_id(c): source(c) for c in json.loads(master.read_text())["cells"]}
    tasks = {}
    for gid, text in cells.items():
        if gid.startswith("md_task_"):
            task_id = gid.removeprefix("md_task_").replace("_", ".")
            level = re.search(r"^### Task [\d.]+ \[([BIA])\]", text, re.MULTILINE).group(1)
            tasks[task_id] = (level, text, cells["task_" + gid.removeprefix("md_task_")])
    return tasks


# --- the code in the hints -------------------------------------------------------------------

def hints(markdown):
    """The `<details>` blocks of a task's markdown, in order."""
    return re.findall(r"<details>.*?</details>", markdown, re.DOTALL)


def code_in(hint):
    """The code snippets of one hint: fenced blocks, <code> tags and inline code spans."""
    snippets = [m.group(1) for m in re.finditer(r"^```[^\n]*\n(.*?)^```", hint, re.DOTALL | re.MULTILINE)]
    prose = re.sub(r"^```[^\n]*\n.*?^```", " ", hint, flags=re.DOTALL | re.MULTILINE)
    snippets += [html.unescape(m) for m in re.findall(r"<code>(.*?)</code>", prose, re.DOTALL)]
    snippets += [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)\1", prose, re.DOTALL)]
    return snippets


def parse(snippet):
    """The syntax tree of a snippet, or None: a fragment that ends in ':' gets a body."""
    text = snippet.strip()
    for attempt in (text, text + "\n    pass"):
        try:
            return ast.parse(attempt)
        except SyntaxError:
            continue
    return None


def squeeze(text):
    """Text without whitespace, with one quote style: what text matching compares."""
    return re.sub(r"\s+", "", text).replace('"', "'")


# --- the finished pieces of a solution -------------------------------------------------------

def operations(node):
    """How many computing operations a subtree holds (calls with arguments, operators,
    comparisons, slices, conditional expressions, comprehensions, formatted strings)."""
    count = 0
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            count += bool(sub.args or sub.keywords)
        elif isinstance(sub, ast.UnaryOp):
            count += not isinstance(sub.operand, ast.Constant)
        elif isinstance(sub, ast.Subscript):
            count += not _constant(sub.slice)
        elif isinstance(sub, ast.JoinedStr):
            count += any(isinstance(v, ast.FormattedValue) for v in sub.values)
        elif isinstance(sub, (ast.BinOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.ListComp,
                              ast.GeneratorExp, ast.DictComp, ast.SetComp)):
            count += 1
    return count


def _constant(node):
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.Tuple):
        return all(_constant(e) for e in node.elts)
    return isinstance(node, ast.Constant)


def solution_statements(cell):
    """The statements of a solution cell that lie between its solution markers."""
    lines = cell.splitlines()
    inside, regions = False, set()
    for number, line in enumerate(lines, 1):
        if line.strip() == "### BEGIN SOLUTION":
            inside = True
        elif line.strip() == "### END SOLUTION":
            inside = False
        elif inside:
            regions.add(number)
    tree = ast.parse(cell)
    return [s for s in ast.walk(tree) if isinstance(s, ast.stmt) and s.lineno in regions]


def finished_pieces(level, cell):
    """The solution's finished pieces: [(node, text)], the text as written, comments removed."""
    least = 1 if level == "A" else 2
    pieces = []
    for stmt in solution_statements(cell):
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            pieces.append(stmt)
        heads = []
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)):
            heads = [stmt.value]
        elif isinstance(stmt, (ast.If, ast.While)):
            heads = [stmt.test]
        elif isinstance(stmt, ast.For):
            heads = [stmt.iter]
        elif isinstance(stmt, ast.With):
            heads = [item.context_expr for item in stmt.items]
        for head in heads:
            if head is None:
                continue
            if operations(head) >= 1:
                pieces.append(head)
            called = {id(n.func) for n in ast.walk(head) if isinstance(n, ast.Call)}
            pieces += [n for n in ast.walk(head) if isinstance(n, ast.expr) and n is not head
                       and not isinstance(n, (ast.Slice, ast.Tuple)) and id(n) not in called
                       and operations(n) >= least]
    unique = {}
    for node in pieces:
        unique.setdefault(ast.dump(node), node)
    return [(node, _segment(cell, node)) for node in unique.values()]


def specific(node):
    """Specific enough to be matched with other names: two operations or more, or a call with
    two arguments or more (`torch.argmax(_, dim=-1)`); `_ < _` or `_.tensor(_)` is not."""
    if operations(node) >= 2:
        return True
    value = node.value if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)) else node
    return isinstance(value, ast.Call) and len(value.args) + len(value.keywords) >= 2


def _segment(cell, node):
    text = ast.get_source_segment(cell, node)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError):
        return text
    lines = text.splitlines(keepends=True)
    for tok in reversed([t for t in tokens if t.type == tokenize.COMMENT]):
        (row, col), (_, end) = tok.start, tok.end
        lines[row - 1] = lines[row - 1][:col] + lines[row - 1][end:]
    return "".join(lines)


class _Operands(ast.NodeTransformer):
    """Every operand becomes `_`; the functions and methods called stay, and so do the
    operators, the constants and the keyword names."""

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute):
            func = ast.Attribute(value=self._operand(func.value), attr=func.attr, ctx=ast.Load())
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [ast.keyword(arg=k.arg, value=self.visit(k.value)) for k in node.keywords]
        node.func = func
        return node

    def _operand(self, node):
        return self.visit(node) if not _chain(node) else ast.Name(id="_", ctx=ast.Load())

    def visit_Name(self, node):
        return ast.Name(id="_", ctx=ast.Load())

    def visit_Attribute(self, node):
        return ast.Name(id="_", ctx=ast.Load()) if _chain(node) else self.generic_visit(node)

    def visit_Subscript(self, node):
        if _chain(node):
            return ast.Name(id="_", ctx=ast.Load())
        return self.generic_visit(node)


def _chain(node):
    """A variable, its attributes and constant indices (`cfg["emb_dim"]`, `x.shape[-1]`)."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _chain(node.value)
    if isinstance(node, ast.Subscript):
        return _constant(node.slice) and _chain(node.value)
    return False


def renamed(node):
    return ast.unparse(_Operands().visit(copy.deepcopy(node)))


def _exact(node):
    return ast.unparse(node)


# --- the check -------------------------------------------------------------------------------

def leaks(level, solution_cell, hint):
    """The finished pieces of the solution that the hint's code holds: [(how, piece)]."""
    snippets = code_in(hint)
    trees = [t for t in map(parse, snippets) if t is not None]
    hint_nodes = [n for t in trees for n in ast.walk(t) if isinstance(n, (ast.expr, ast.stmt))]
    exact = {_exact(n) for n in hint_nodes}
    as_renamed = {renamed(n) for n in hint_nodes}
    texts = [squeeze(s) for s in snippets]
    found = []
    for node, text in finished_pieces(level, solution_cell):
        squeezed = squeeze(text)
        pattern = r"(?<![\w.])" + re.escape(squeezed) + r"(?!\w)"
        if _exact(node) in exact or any(re.search(pattern, t) for t in texts):
            found.append(("as written", text))
        elif specific(node) and renamed(node) in as_renamed:
            found.append(("with other names", text))
    return found


def every_task():
    return [pytest.param(level, markdown, cell, id=task_id)
            for master in MASTERS for task_id, (level, markdown, cell) in tasks_of(master).items()]


@pytest.mark.parametrize("level, markdown, cell", every_task())
def test_no_hint_is_the_finished_code(level, markdown, cell):
    assert hints(markdown), "every task has hints in <details> blocks"
    found = {}
    for number, hint in enumerate(hints(markdown), 1):
        for how, piece in leaks(level, cell, hint):
            found.setdefault(f"hint {number}", []).append(f"{piece!r} ({how})")
    assert not found, f"hints that hold finished code of the solution: {found}"


@pytest.mark.parametrize("level, markdown, cell", every_task())
def test_the_detector_finds_the_solution_in_itself(level, markdown, cell):
    """A hint made of the solution cell is caught: the check above looks at real pieces."""
    assert finished_pieces(level, cell)
    solution = "<details>\n\n```python\n" + cell + "\n```\n</details>"
    assert leaks(level, cell, solution)


# Excerpts of hints as they once stood: each handed over finished code.
KNOWN_LEAKS = {
    "4.1": ("B", "`x.var(dim=-1, keepdim=True, unbiased=False)` is the biased variance of every "
                 "row. Then `(x - mean) / torch.sqrt(var + self.eps)`"),
    "4.2": ("B", "Compute `inner = x + 0.044715 * x**3`, then `torch.tanh(math.sqrt(2.0 / "
                 "math.pi) * inner)`, and finally `0.5 * x * (1 + ...)`."),
    "4.3": ("B", "With `emb = cfg[\"emb_dim\"]`: `nn.Linear(emb, 4 * emb)`, `GELU()`, "
                 "`nn.Linear(4 * emb, emb)`, passed to `nn.Sequential` in this order."),
    "4.6": ("B", "`torch.argmax(scores, dim=-1, keepdim=True)` gives the best token of every row "
                 "with shape `(batch, 1)`, ready for `torch.cat((sequence, best), dim=1)`."),
    "5.1": ("B", "`tokenizer.encode(text)` returns a plain Python list of ints and refuses special "
                 "tokens unless you allow them: "
                 "`tokenizer.encode(text, allowed_special={\"<|endoftext|>\"})`."),
    "5.5": ("I", "`checkpoint = torch.load(path, map_location=\"cpu\", weights_only=True)` gives "
                 "the dictionary back."),
    "6.1": ("B", "`logits / temperature` makes a new tensor; `torch.softmax(scaled, dim=-1)` "
                 "normalises along the last dimension."),
    "6.2": ("I", "`torch.where(logits < kth, torch.full_like(logits, float(\"-inf\")), logits)`, "
                 "or `logits.masked_fill(logits < kth, float(\"-inf\"))`."),
    "6.3": ("A", "`torch.cumsum(sorted_probs, dim=-1)` is the running total. That is "
                 "`cumsum - sorted_probs >= p`. `remove = torch.zeros_like(remove_sorted)"
                 ".scatter(-1, sorted_ids, remove_sorted)`"),
    "7.5": ("B", "`length = min(max_length, model.pos_emb.weight.shape[0])`, then "
                 "`ids = ids[:length]`"),
    "8.1": ("I", "`nn.Parameter(torch.empty(in_dim, rank))` makes a parameter; "
                 "`nn.Parameter(torch.zeros(rank, out_dim))` is `B`."),
}


def solution_cell(task_id):
    for master in MASTERS:
        tasks = tasks_of(master)
        if task_id in tasks:
            return tasks[task_id][2]
    raise KeyError(task_id)


@pytest.mark.parametrize("task_id", sorted(KNOWN_LEAKS))
def test_the_detector_finds_the_leaks_the_issue_names(task_id):
    level, text = KNOWN_LEAKS[task_id]
    assert leaks(level, solution_cell(task_id), f"<details>{text}</details>")


def test_what_the_detector_lets_through():
    """Functions named without the finished call, and bare calls, are hints, not answers."""
    cell = solution_cell("4.1")
    allowed = ("`x.var` takes the same `dim` and `keepdim` as the mean; `unbiased=False` gives "
               "the biased variance. `torch.sqrt`, `self.eps`, `model.eval()`, "
               "`with torch.no_grad():`")
    assert not leaks("B", cell, f"<details>{allowed}</details>")
    # The renamed match catches the same call with other variable names ...
    assert leaks("B", cell, "<details>`(h - mu) / torch.sqrt(sigma2 + self.eps)`</details>")
    assert leaks("I", solution_cell("7.4"), "<details>`F.cross_entropy(out, y)`</details>")
    # ... but not the result reached another way: the docstring says what is left to review.
    assert not leaks("B", cell, "<details>`(x - m) * torch.rsqrt(v + 1e-5)`</details>")
