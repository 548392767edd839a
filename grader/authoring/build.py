"""Build everything that is generated from the masters in solutions/.

    python -m grader build            # write reference package, manifest, release, fixtures
    python -m grader build --check    # exit 1 (and say what) when anything committed is stale
    python -m grader build --chapters 06_sampling [...]   # only these chapters' files (and the
                                      # manifest, contract page and README table they are part of)

One source for each fact: a task's solution exists only in its master's solution cell.
- grader/reference/chNN_*.py and grader/reference/manifest.json: the masters' setup cells
  and solution cells with the solution markers removed;
- course/NN_*.ipynb: the student release, made by `nbgrader generate_assignment`;
- course/gptcourse/checking/fixtures/NN_*.json: the reference's observations on the public cases;
- docs/contract.md: the course's contract, each task's contract (its TaskSpec in its public chapter
  module) with what the course table and the masters say of it (grader/authoring/contract.py);
- README.md's chapter table: a row per chapter of the course table (the rest of the README is
  written by hand).
"""
import argparse
import difflib
import dis
import json
import os
import sys
import tempfile

import nbformat

from gptcourse.checking import conventions, records
from gptcourse.checking.tasks import chapter_names, get_chapter, get_task, task_of_cell, tasks_of
from grader.authoring.contract import contract_files
from grader.nbgrading.course import make_course
from grader.paths import (  # noqa: F401 - SOLUTIONS, nbgrader_command: imported from here by other tools
    COURSE, FIXTURES, REFERENCE, ROOT, SOLUTIONS, load_manifest, master_path, nbgrader_command)

README = os.path.join(ROOT, "README.md")

# ------------------------------------------------------------------------------------------
# Reading masters
# ------------------------------------------------------------------------------------------

def read_notebook(path):
    return nbformat.read(path, as_version=4)


def chapter_manifest(chapter):
    """What the grader needs from a master: setup code, carry-over code, tasks with points."""
    nb = read_notebook(master_path(chapter))
    setup, carry, tasks = [], [], {}
    for cell in nb.cells:
        grade_id = conventions.grade_id(cell)
        if cell.cell_type != "code":
            continue
        if conventions.SETUP_TAG in conventions.tags(cell):
            setup.append(cell.source.strip("\n") + "\n")
        elif conventions.is_kind(grade_id, conventions.CARRY):
            carry.append(carried_reference_import(task_of_cell(grade_id)))
        elif conventions.is_kind(grade_id, conventions.SOLUTION):
            task = task_of_cell(grade_id)
            tasks.setdefault(task.id, {})["source"] = conventions.strip_markers(cell.source)
        elif conventions.is_kind(grade_id, conventions.CHECK):
            task = task_of_cell(grade_id)
            tasks.setdefault(task.id, {})["points"] = conventions.nbgrader_metadata(cell)["points"]
            tasks[task.id]["check_source"] = conventions.without_hidden_tests(cell.source).strip("\n") + "\n"
    expected = [task.id for task in tasks_of(chapter)]
    if sorted(tasks) != sorted(expected) or any(len(t) != 3 for t in tasks.values()):
        raise ValueError(f"{master_path(chapter)}: expected a solution cell and a check cell for "
                         f"each of the tasks {expected}, found {tasks}")
    return {"setup": setup, "carry": carry, "tasks": {tid: tasks[tid] for tid in expected}}


def names_read(source):
    """The global names a cell's code reads, in its functions and class bodies too."""
    def walk(code):
        names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
        for const in code.co_consts:
            if hasattr(const, "co_code"):
                names |= walk(const)
        return names

    return walk(compile(source, "<cell>", "exec"))


def carried_reference_import(task):
    """What a carry-over cell becomes in the reference package: an import of the earlier
    chapter's reference. (In the notebook the cell loads the student's earlier notebook,
    which is not there when the grader imports the reference.)"""
    return f"from grader.reference.ch{task.chapter} import {', '.join(task.names)}\n"


def build_manifest(chapters=None):
    """The manifest of the given chapters (default: every chapter of the course table)."""
    return {chapter: chapter_manifest(chapter) for chapter in chapters or chapter_names()}


def course_manifest(chapters=None):
    """The whole course's manifest, with `chapters` made again from their masters and every other
    chapter as committed (grader/reference/manifest.json); all of it made again when `chapters`
    is None. What a build of a few chapters writes: the manifest and the contract page are the
    whole course's."""
    if chapters is None:
        return build_manifest()
    fresh, committed = build_manifest(chapters), load_manifest()
    never_built = [chapter for chapter in chapter_names() if chapter not in fresh and chapter not in committed]
    if never_built:
        raise SystemExit(f"the manifest has no entry for {', '.join(never_built)} yet: build it too "
                         f"(--chapters ... {' '.join(never_built)}), or every chapter (`make release`)")
    return {chapter: fresh[chapter] if chapter in fresh else committed[chapter] for chapter in chapter_names()}


# ------------------------------------------------------------------------------------------
# Generated files
# ------------------------------------------------------------------------------------------

GENERATED_HEADER = '''"""Reference solutions of {chapter}: GENERATED from solutions/{chapter}.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""
'''


def reference_module_text(chapter, manifest):
    parts = [GENERATED_HEADER.format(chapter=chapter)]
    parts += [f"# %% setup\n{source}" for source in manifest["setup"]]
    parts += [f"# %% carried over from an earlier chapter\n{source}" for source in manifest["carry"]]
    for task_id, task in manifest["tasks"].items():
        parts.append(f"# %% task {task_id}: {', '.join(get_task(task_id).names)}\n{task['source']}")
    return "\n\n".join(parts)


def reference_files(manifest, chapters=None):
    """The manifest and the reference modules of `chapters` (default: every chapter in it)."""
    files = {os.path.join(REFERENCE, "manifest.json"): json.dumps(manifest, indent=1, sort_keys=True) + "\n"}
    for chapter in chapters or manifest:
        files[os.path.join(REFERENCE, f"ch{chapter}.py")] = reference_module_text(chapter, manifest[chapter])
    return files


def fixture_files(chapters=None):
    """The reference's observations on the public cases, with the known mistakes'.

    Computed with one torch thread, as the grader computes its expectations: with several, the
    order in which float32 sums are added depends on how many threads the math library takes,
    which changes with the machine's load, and gradients then move by 1e-5 from one build to
    the next (a fixture that looks stale on a busy machine)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _fixture_files(chapters or chapter_names())
    finally:
        torch.set_num_threads(threads)


def _fixture_files(chapters):
    from grader.chapters import public_cases
    from grader.grading.expectations import expectations

    files = {}
    for chapter in chapters:
        content = {}
        for task in tasks_of(chapter):
            entries = []
            for case in public_cases(task.id):
                expected, mistakes = expectations(case)
                entries.append({
                    "case": case.to_data(),
                    "expected": expected,
                    "mistakes": [{"message": m, "observations": o} for m, o in mistakes()],
                })
            content[task.id] = entries
        files[os.path.join(FIXTURES, f"{chapter}.json")] = records.dumps(content, indent=1) + "\n"
    return files


# -- the student release ---------------------------------------------------------------------

VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime", "jupyter")


def normalize_notebook(nb):
    """Strip what changes on every run so that diffs show only real changes."""
    nb.metadata = {key: nb.metadata[key] for key in ("kernelspec", "gptcourse") if key in nb.metadata}
    nb.metadata["language_info"] = {"name": "python"}
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def notebook_text(nb):
    return nbformat.writes(normalize_notebook(nb)) + ""


def release_files(chapters=None):
    """Run nbgrader generate_assignment on each master in a scratch course directory."""
    chapters = chapters or chapter_names()
    files = {}
    with tempfile.TemporaryDirectory() as course_root:
        make_course(course_root, chapters)
        for chapter in chapters:
            released = read_notebook(os.path.join(course_root, "release", chapter, f"{chapter}.ipynb"))
            files[os.path.join(COURSE, f"{chapter}.ipynb")] = notebook_text(released)
    return files


def master_files(chapters=None):
    """The masters themselves, normalised (they are committed without outputs)."""
    return {master_path(c): notebook_text(read_notebook(master_path(c))) for c in chapters or chapter_names()}


# ------------------------------------------------------------------------------------------

def stale_files(files):
    stale = []
    for path, text in files.items():
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current != text and not (current and path.startswith(FIXTURES) and _same_numbers(current, text)):
            stale.append(path)
    return stale


def _same_numbers(committed, generated, tolerance=1e-6, array_tolerance=1e-5):
    """Fixtures made on another CPU may differ in the last bits; that is not staleness.

    An array of floats is compared at its own scale: a float32 gradient summed over many terms
    differs between CPUs (an Intel and an AMD machine, their vector units) by about 1e-6 of its
    largest entry, so an entry of 10 beside one of 100 moves by 3e-5, and an entry that should be 0
    holds rounding noise. Within `array_tolerance` of max(1, the array's largest magnitude) it is
    the same array; a master that changed moves it by far more. Integers (token ids, counts)
    must be equal."""
    import numpy as np

    def same_array(a, b):
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
            return np.array_equal(a, b)
        finite = np.abs(b[np.isfinite(b)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        return bool(np.allclose(a, b, rtol=0, atol=array_tolerance * scale, equal_nan=True))

    def same(a, b):
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return same_array(a, b)
        if isinstance(a, float) and isinstance(b, float):  # a loss, a rate: plain numbers have last bits too
            return bool(np.isclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True))
        return a == b

    return same(records.loads(committed), records.loads(generated))


def write_files(files):
    for path, text in files.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


# -- the README's chapter table ----------------------------------------------------------------

CHAPTER_TABLE_HEADER = "| chapter | notebook | tasks |\n|---|---|---|\n"


def readme_row(chapter):
    """The README's row for a chapter of the course table: its number and title, its notebook, its
    first and last task with their levels."""
    first, last = chapter.tasks[0], chapter.tasks[-1]
    return (f"| {chapter.number} {chapter.title} | [`course/{chapter.name}.ipynb`](course/{chapter.name}.ipynb) | "
            f"{first.id} [{first.level}] – {last.id} [{last.level}] |")


def with_chapter_table(readme):
    """The README's text with the rows of its chapter table (every line after the table's header
    that starts a row) written from the course table."""
    start = readme.index(CHAPTER_TABLE_HEADER) + len(CHAPTER_TABLE_HEADER)
    end = start
    while readme.startswith("| ", end):
        end = readme.index("\n", end) + 1
    rows = "".join(readme_row(get_chapter(name)) + "\n" for name in chapter_names())
    return readme[:start] + rows + readme[end:]


def readme_files():
    with open(README, encoding="utf-8") as f:
        return {README: with_chapter_table(f.read())}


# ------------------------------------------------------------------------------------------

def all_files(chapters=None):
    """Generated files in build order (the fixtures need the fresh reference package): every
    chapter's, or the given chapters' with what the whole course makes of them (the manifest,
    the contract page, the README's table)."""
    yield lambda: master_files(chapters)
    yield lambda: reference_files(course_manifest(chapters), chapters)
    yield lambda: release_files(chapters)
    yield lambda: fixture_files(chapters)
    yield lambda: contract_files(course_manifest(chapters))
    yield readme_files


def add_parser(commands):
    p = commands.add_parser("build", help="regenerate the reference, the release and the fixtures from the masters",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="report stale files, write nothing")
    names = chapter_names()
    p.add_argument("--chapters", nargs="+", choices=names, default=None, metavar="CHAPTER",
                   help=f"build only these chapters (default: all): {', '.join(names)}")
    return p


def main(args):
    """The build; a data file that cannot be had (no mirror, no internet) is one message and
    exit status 2, not a traceback: its text says how to point the course at a mirror."""
    from gptcourse.data import ChecksumError, DownloadError

    try:
        return _build(args)
    except (DownloadError, ChecksumError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _build(args):
    stale = []
    for make in all_files(args.chapters):
        files = make()
        if args.check:
            for path in stale_files(files):
                stale.append(path)
                if path.endswith((".py", ".json", ".md")) and os.path.exists(path):
                    diff = difflib.unified_diff(open(path).read().splitlines(), files[path].splitlines(),
                                                "committed", "generated", lineterm="", n=1)
                    print("\n".join(list(diff)[:40]))
        else:
            # Only what changed: a fixture whose numbers moved in the last bits (another CPU,
            # another load) keeps its committed text, so a rebuild leaves no noise in the diff.
            write_files({path: files[path] for path in stale_files(files)})
            _reload_reference()
    if args.check and stale:
        print("stale generated files (run `make release`):\n  " + "\n  ".join(os.path.relpath(p, ROOT) for p in stale))
        return 1
    print("all generated files are fresh" if args.check else "generated files written")
    return 0


def _reload_reference():
    """After writing new reference modules, later steps must not use the old ones."""
    stale = ("grader.reference.", "grader.chapters", "grader.grading.expectations")
    for name in [n for n in sys.modules if n.startswith(stale)]:
        del sys.modules[name]


if __name__ == "__main__":  # the older spelling, python -m grader.authoring.build
    from grader.__main__ import main as grader_main

    sys.exit(grader_main(["build", *sys.argv[1:]]))
