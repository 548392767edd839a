"""The workshop edition: the student notebooks with a folded-away answer after every task.

    python -m grader workshop --out DIR        # or: make workshop OUT=DIR

A 90-minute practical must not stall on one task. In this edition each task cell is followed
by an "Answer" code cell, collapsed, whose first line reads
"# Answer to Task 2.1 — try it yourself first". The answer does nothing until the participant
chooses it: running the notebook top to bottom checks their own code. A participant who is
stuck opens the cell (one click), sets `use_answer = True` in it, runs it and the check cell
below, and goes on with the rest of the notebook. A carry-over cell (chapter 03 brings
CausalAttention from chapter 02) is followed by the earlier task's answer too, so chapter 03
runs even where chapter 02 was left unfinished.

The edition is the student release (course/NN_name.ipynb) plus those cells, whose code is the
masters' solution code without the solution markers. It contains the solutions: hand it out
only where answers are meant to be seen. The graded release in course/ is not touched.
"""
import argparse
import ast
import io
import os
import sys
import tokenize

import nbformat

from gptcourse.checking.tasks import carried_tasks, chapter_names, get_task, task_of_cell
from gptcourse.checking import conventions
from grader.authoring.build import COURSE, SOLUTIONS, build_manifest, master_path, names_read, read_notebook

ANSWER_TAG = "answer"


def solutions_by_task():
    """{task id: the master's solution cell without its markers} for every chapter."""
    found = {}
    for chapter in chapter_names():
        for cell in read_notebook(master_path(chapter)).cells:
            grade_id = conventions.grade_id(cell)
            if cell.cell_type == "code" and conventions.is_kind(grade_id, conventions.SOLUTION):
                found[task_of_cell(grade_id).id] = conventions.strip_markers(cell.source)
    return found


def answer_cell(task_id, solution, carried=False):
    """A collapsed code cell holding the answer to a task, which does nothing until the
    participant chooses it: its code runs only once they set `use_answer = True` in it. Running
    the notebook top to bottom therefore checks their own code, never the answer."""
    task = get_task(task_id)
    if carried:  # in a later chapter: the participant has tried it already
        first_line = (f"# Answer to Task {task.id} (chapter {task.chapter.split('_')[0]}) — "
                      f"use it only if your own {', '.join(task.names)} does not pass its check")
    else:
        first_line = f"# Answer to Task {task.id} — try it yourself first"
    source = "\n".join([
        first_line,
        f"# Running this cell leaves your own code in place. To use the answer instead, set",
        f"# use_answer = True and run this cell, then the check cell{' after it' if not carried else 's below'}.",
        "use_answer = False",
        "if use_answer:",
        indented(solution.strip("\n")),
        f"    print(\"Task {task.id}: the answer is in use in place of your own {', '.join(task.names)}.\")",
    ])
    return nbformat.v4.new_code_cell(
        source,
        id=f"answer-{task.id.replace('.', '-')}",
        metadata={"jupyter": {"source_hidden": True}, "tags": [ANSWER_TAG]},
    )


def indented(code, prefix="    "):
    """The code as the body of an `if`: every line indented, except the lines inside a
    triple-quoted string that is not a docstring (its text would change; a docstring's
    indentation is ignored by Python's help)."""
    docstrings = {node.body[0].lineno for node in ast.walk(ast.parse(code))
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    kept = set()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0] and token.start[0] not in docstrings:
            kept.update(range(token.start[0] + 1, token.end[0] + 1))
    return "\n".join(line if number in kept or not line.strip() else prefix + line
                     for number, line in enumerate(code.split("\n"), start=1))


def answer_code(cell_source):
    """The answer's code in an answer cell (the body of its `if use_answer:`), as the master has it."""
    lines = cell_source.split("\n")
    body = lines[lines.index("if use_answer:") + 1:-1]  # without the closing print
    return "\n".join(line[4:] if line.startswith("    ") else line for line in body)


def carried_answer(task_id, solutions, chapter):
    """The answer to an earlier chapter's task, for a notebook of `chapter`: the answers of
    everything its code uses (chapter 04's GPTModel needs LayerNorm, ..., TransformerBlock and
    chapter 03's MultiHeadAttention), after the imports and constants of the earlier chapters'
    setup cells that this code reads and `chapter`'s own setup does not define (chapter 01's
    TOKEN_PATTERN, `re`, `Dataset`)."""
    manifest = build_manifest()
    needed = [task.id for task in carried_tasks(task_id)] + [task_id]
    code = [solutions[needed_id].strip("\n") for needed_id in needed]
    read = set().union(*(names_read(source) for source in code))
    own = {name for setup in manifest[chapter]["setup"] for name, _ in _definitions(setup)}
    prelude = []
    for earlier in dict.fromkeys(get_task(needed_id).chapter for needed_id in needed):
        for setup in manifest[earlier]["setup"]:
            for name, statement in _definitions(setup):
                if name in read and name not in own and statement not in prelude:
                    prelude.append(statement)
    return "\n\n".join(["\n".join(prelude)] * bool(prelude) + code) + "\n"


def _definitions(source):
    """(name, statement) for every top-level import and assignment of a setup cell."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                yield name, ast.get_source_segment(source, node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, ast.get_source_segment(source, node)


def workshop_notebook(chapter, solutions):
    """The released notebook of `chapter` with an answer cell after each task and carry cell."""
    nb = read_notebook(os.path.join(COURSE, f"{chapter}.ipynb"))
    cells = []
    waiting = None  # a carried task: its answer goes after the carry cell and its paste cell
    for index, cell in enumerate(nb.cells):
        cells.append(cell)
        grade_id = conventions.grade_id(cell)
        if conventions.is_kind(grade_id, conventions.SOLUTION):
            task_id = task_of_cell(grade_id).id
            cells.append(answer_cell(task_id, solutions[task_id]))
        elif conventions.is_kind(grade_id, conventions.CARRY):
            waiting = task_of_cell(grade_id).id
        following = nb.cells[index + 1] if index + 1 < len(nb.cells) else None
        if waiting and not (following is not None and conventions.PASTE_TAG in conventions.tags(following)):
            cells.append(answer_cell(waiting, carried_answer(waiting, solutions, chapter), carried=True))
            waiting = None
    nb.cells = cells
    return nb


def write_workshop(out):
    """Write the workshop edition of every chapter into the folder `out`; return the paths."""
    out = os.path.abspath(out)
    if out in (os.path.abspath(COURSE), os.path.abspath(SOLUTIONS)):
        raise ValueError(f"{out} holds the release or the masters: choose another folder")
    os.makedirs(out, exist_ok=True)
    solutions = solutions_by_task()
    paths = []
    for chapter in chapter_names():
        path = os.path.join(out, f"{chapter}.ipynb")
        nbformat.write(workshop_notebook(chapter, solutions), path)
        paths.append(path)
    return paths


def add_parser(commands):
    p = commands.add_parser("workshop", help="write the workshop edition (the release with folded answers)",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="folder for the workshop notebooks")
    return p


def main(args):
    try:
        paths = write_workshop(args.out)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"workshop edition ({len(paths)} notebooks, answers included) in {os.path.abspath(args.out)}")
    return 0


if __name__ == "__main__":  # the older spelling, python -m grader.authoring.workshop
    from grader.__main__ import main as grader_main

    sys.exit(grader_main(["workshop", *sys.argv[1:]]))
