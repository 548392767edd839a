"""Adding a chapter touches five things of its own and one line of the course table (issues 26,
35 and 40).

A toy chapter "99_toy" with one task, 99.1 `double(x)`, is made here of exactly what
docs/authoring.md ("Adding a chapter, exactly") lists, all of it in tmp_path:

1. its master notebook (the cell conventions: metadata, setup, task text, solution, check);
2. its public chapter module, gptcourse.checking.chapters.ch99_toy (KEY_NAMES, SPECS: the task's contract
   and probes);
3. its grader's chapter module, grader.chapters.ch99_toy (SPECS: the task's cases, one known mistake);
4. its corpus: a wrong and a correct student cell;
5. one line of the course table, a `Chapter(...)` (registered with register_chapter).

Then the real pipeline runs on it, unchanged: the build reads the master and writes the
reference module, the manifest and the self-check fixtures; the self-check passes the correct
cell and names the known mistake of the wrong one; the grader (one worker process, no sandbox)
grades two students' notebooks; the contract's section of the task (grader/contract.py, what
docs/contract.md and `python -m grader where` print) is derived from the master, the course line,
the entry and the files. Last, the point: no shared module names the chapter or its task.

What stands in for "the file is in the repository":
- the modules are loaded from tmp_path into sys.modules (this process), and a sitecustomize.py
  on the worker's PYTHONPATH registers the same course line and module there (the worker is
  another process, started by the real pool);
- the build's output folders (grader.paths.SOLUTIONS, build.REFERENCE, build.FIXTURES, the
  reference manifest grader.paths.MANIFEST, the self-check's FIXTURE_DIR) point into tmp_path, and the build is
  asked for the toy chapter alone (its functions take the chapters, default every chapter of
  the course table): building the nine real chapters would take minutes.
The student release (`build.release_files`: nbgrader's generate_assignment in a subprocess)
is the second, `slow`, test.

Outside its own files the chapter still lacks what the tests keep per chapter by hand (an entry
in two tables, a test file): the second test shows the checks of tests/chapter_entries.py naming
it in each. The third makes each change of docs/authoring.md's recipe ("Changing a case, a known
mistake or a hint") to the toy chapter: its fixtures change exactly when the recipe says
`make release`.

Cost (2 shared CPU cores): about 7 s for the first test, most of it the worker host importing
torch; under a second for the second and the third; about 7 s for the slow one.
"""
import dataclasses
import importlib.util
import os
import re
import subprocess
import sys

import nbformat
import pytest

from gptcourse.checking import conventions, course, selfcheck
from gptcourse.checking.selfcheck import SelfCheckFailed

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOY = "99_toy"
TASK = "99.1"
MISTAKE = "the input is tripled, not doubled"

# ------------------------------------------------------------------------------------------
# The five pieces of the toy chapter
# ------------------------------------------------------------------------------------------

# 5. The one line of the course table (gptcourse/checking/course.py), evaluated in course.py's namespace.
COURSE_LINE = 'Chapter("99_toy", "A toy chapter", 60, (task("99.1", ("double",), "B", "Doubling a tensor"),))'

# 2. The public chapter module: what the task's checks pin down (its contract), how it is probed,
# how feedback names what it saw.
PUBLIC_MODULE = '''\
"""Chapter 99, a toy: double(x) returns a tensor twice its input."""
from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.contract import Contract

CHAPTER = "99_toy"
KEY_NAMES = {"doubled": "Doubled tensor"}
GRADING_DATA = ()  # no data set to fetch before grading it

SPECS = {
    "99.1": TaskSpec(
        contract=Contract(pinned=("Returns twice its input, a tensor of the same shape.",),
                          free=("How it doubles: a product or a sum.",)),
        probes={"call": kinds.Function(lambda probe: ([probe.input("x")], {}), outputs=(("doubled", "the returned tensor"),),
                                       tensors=True)}),
}
'''

# 3. The grader's chapter module: public cases (their outputs ship as fixtures), hidden cases
# drawn from the grading seed, and one known mistake.
GRADER_MODULE = '''\
"""The grader's chapter module of the toy chapter: its cases and its known mistake."""
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec


def _case(rng, rows, cols):
    return Case("99.1", "call", f"a {rows} x {cols} tensor", {}, {"x": rng.normal(size=(rows, cols))})


SPECS = {
    "99.1": GraderSpec(
        public=lambda rng: [_case(rng, 2, 3)],
        hidden=lambda rng: [_case(rng, 1, 5), _case(rng, 4, 2)],
        mistakes=lambda: [("the input is tripled, not doubled", lambda x: x * 3)]),
}
'''

# 1. The master notebook's cells (the solution between the markers; the hidden tests' two lines).
SETUP_SOURCE = "import torch\n\nfrom gptcourse import check"
SOLUTION_SOURCE = '''\
def double(x):
    """Twice the input tensor."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION'''
CHECK_SOURCE = '''\
### BEGIN HIDDEN TESTS
from grader.nbgrader_bridge import run_hidden_tests
run_hidden_tests("99.1", globals())
### END HIDDEN TESTS
check("99.1", double)'''

# 4. The corpus: realistic student cells, one wrong (the known mistake), one correct, each with
# the header lines of tests/corpus/README.md.
CORPUS = {
    "wrong_tripled.py": "# expect: wrong\n# mistake: triples\n# keywords: tripled\ndef double(x):\n    return x * 3\n",
    "correct_sum.py": "# expect: correct\n# mistake: none (a sum)\ndef double(x):\n    return x + x\n",
}

def _nbgrader(grade_id, **flags):
    return {"nbgrader": {"grade_id": grade_id, "locked": not flags.get("solution", False), "schema_version": 3,
                         "solution": False, "grade": False, "task": False, **flags}}


def master_notebook():
    """The master, with the cell conventions of docs/authoring.md."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook()
    nb.metadata["gptcourse"] = {"chapter": TOY}
    nb.cells = [
        md("# Chapter 99 — A toy chapter"),
        code(SETUP_SOURCE, metadata={**_nbgrader("setup"), "tags": [conventions.SETUP_TAG]}),
        md("### Task 99.1 [B] — Doubling a tensor\n\nWrite `double(x)`: a tensor twice `x`.",
           metadata=_nbgrader("md_task_99_1")),
        code(SOLUTION_SOURCE, metadata=_nbgrader(conventions.grade_id_for(conventions.SOLUTION, TASK), solution=True)),
        code(CHECK_SOURCE, metadata=_nbgrader(conventions.grade_id_for(conventions.CHECK, TASK), grade=True, points=1)),
    ]
    return nb


def write_chapter(root):
    """The four files of the chapter under `root`, where its author writes them in the repository;
    returns what the chapter is made of: those paths and the course table's line."""
    files = {
        "solutions/99_toy.ipynb": nbformat.writes(master_notebook()),
        "course/gptcourse/checking/chapters/ch99_toy.py": PUBLIC_MODULE,
        "grader/chapters/ch99_toy.py": GRADER_MODULE,
        **{f"tests/corpus/{TASK}/{name}": source for name, source in CORPUS.items()},
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return [*files, f"course/gptcourse/checking/course.py: {COURSE_LINE}"]


# ------------------------------------------------------------------------------------------
# Putting the chapter where the course finds it (this process, and the grader's worker)
# ------------------------------------------------------------------------------------------

def load_module(monkeypatch, name, path):
    """Import the file at `path` as module `name` (taken away again after the test)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


# Run by the worker host's interpreter at start-up (Python imports `sitecustomize` from its path).
WORKER_SITECUSTOMIZE = '''\
import gptcourse.checking.chapters
from gptcourse.checking import course

course.register_chapter(eval({line!r}, vars(course)))
gptcourse.checking.chapters.__path__.append({public_dir!r})
'''


def make_worker_know_the_chapter(monkeypatch, root):
    site = root / "worker_site"
    site.mkdir()
    public_dir = str(root / "course" / "gptcourse" / "checking" / "chapters")
    (site / "sitecustomize.py").write_text(WORKER_SITECUSTOMIZE.format(line=COURSE_LINE, public_dir=public_dir))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy chapter written under tmp_path and registered; everything undone afterwards."""
    written = write_chapter(tmp_path)
    course.register_chapter(eval(COURSE_LINE, vars(course)))
    selfcheck.load_fixtures.cache_clear()
    try:
        load_module(monkeypatch, "gptcourse.checking.chapters.ch99_toy", tmp_path / "course/gptcourse/checking/chapters/ch99_toy.py")
        load_module(monkeypatch, "grader.chapters.ch99_toy", tmp_path / "grader/chapters/ch99_toy.py")
        yield tmp_path, written
    finally:
        course.unregister_chapter(TOY)
        selfcheck.load_fixtures.cache_clear()


def point_the_build_at(root, monkeypatch):
    """The build reads the master from root/solutions and writes under root."""
    from grader import build, paths

    monkeypatch.setattr(paths, "SOLUTIONS", str(root / "solutions"))
    for name, folder in (("REFERENCE", "reference"), ("FIXTURES", "fixtures"), ("COURSE", "course")):
        monkeypatch.setattr(build, name, str(root / folder))
    return build


def repository_status():
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout


# ------------------------------------------------------------------------------------------
# The test
# ------------------------------------------------------------------------------------------

def test_a_new_chapter_is_its_five_pieces_one_course_line_and_its_contract(toy, monkeypatch):
    from grader import build, engine, paths
    from grader import contract as contract_page

    root, written = toy
    status_before = repository_status()

    # The build: the master -> the manifest entry and the reference module.
    point_the_build_at(root, monkeypatch)
    entry = build.chapter_manifest(TOY)
    assert entry["setup"] == [SETUP_SOURCE + "\n"]
    assert entry["tasks"][TASK]["points"] == 1
    assert "BEGIN SOLUTION" not in entry["tasks"][TASK]["source"] and "return 2 * x" in entry["tasks"][TASK]["source"]
    assert "run_hidden_tests" not in entry["tasks"][TASK]["check_source"]
    build.write_files(build.reference_files(build.build_manifest([TOY])))
    load_module(monkeypatch, "grader.reference.ch99_toy", root / "reference" / "ch99_toy.py")

    # ... and the self-check's fixtures, from the reference and the grader's chapter module (its
    # public cases and known mistake).
    build.write_files(build.fixture_files([TOY]))
    monkeypatch.setattr(selfcheck, "FIXTURE_DIR", str(root / "fixtures"))
    (fixture,) = selfcheck.load_fixtures(TOY)[TASK]
    assert fixture["mistakes"][0]["message"] == MISTAKE

    # The self-check in a student's notebook: the correct cell passes, the wrong one is named.
    cells = {name: _defined(source)["double"] for name, source in CORPUS.items()}
    selfcheck.check(TASK, cells["correct_sum.py"])
    with pytest.raises(SelfCheckFailed, match=f"Doubled tensor: wrong — it looks like {MISTAKE}"):
        selfcheck.check(TASK, cells["wrong_tripled.py"])

    # The grader: two students' notebooks, one worker process started by the real pool.
    monkeypatch.setattr(paths, "MANIFEST", str(root / "reference" / "manifest.json"))
    make_worker_know_the_chapter(monkeypatch, root)
    for student, cell in (("wrong", "wrong_tripled.py"), ("right", "correct_sum.py")):
        nbformat.write(_student_notebook(CORPUS[cell]), _mkdirs(root / "subs" / student / f"{TOY}.ipynb"))
    settings = engine.Settings(out_dir=str(root / "out"), device="cpu", jobs=1, sandbox="none", progress=False)
    graded = {r["submission"]: r for r in engine.grade([str(root / "subs")], settings)}
    assert graded["right"]["status"] == "passed" and graded["right"]["points"] == 1, graded["right"]
    assert graded["wrong"]["status"] == "failed" and graded["wrong"]["points"] == 0, graded["wrong"]
    assert f"wrong — it looks like {MISTAKE}" in graded["wrong"]["feedback"]
    assert graded["wrong"]["finding"]["kind"] == "known mistake"
    assert graded["wrong"]["finding"]["mistake"] == MISTAKE

    # The contract's section: the entry, and what the course line, the master and the files say.
    section = contract_page.task_section(TASK, entry, root)
    assert section.startswith("### Task 99.1 [B] — Doubling a tensor\n")
    for derived in ("points: 1.", "Graded: `double(x)`", "Returns twice its input", "How it doubles",
                    "solution cell `task_99_1`, check cell `check_99_1`",
                    '`course/gptcourse/checking/chapters/ch99_toy.py`, `SPECS["99.1"]`',
                    '`grader/chapters/ch99_toy.py`, `SPECS["99.1"]`: public cases, hidden cases, known mistakes',
                    "`tests/corpus/99.1/`, 1 wrong and 1 correct cells",
                    "`tests/chapters/test_ch99.py` (missing)"):  # the one piece this test does not write
        assert derived in section, (derived, section)

    # The point: the chapter needed its five pieces, its two shared entries, and nothing shared names it.
    assert sorted(written) == sorted([
        "solutions/99_toy.ipynb", "course/gptcourse/checking/chapters/ch99_toy.py", "grader/chapters/ch99_toy.py",
        "tests/corpus/99.1/correct_sum.py", "tests/corpus/99.1/wrong_tripled.py",
        f"course/gptcourse/checking/course.py: {COURSE_LINE}"])
    assert shared_files_naming_the_toy_chapter() == []
    assert repository_status() == status_before, "the test wrote into the repository"


def _defined(source):
    """What a student's cell defines, run after the setup cell (as the notebook runs them)."""
    namespace = {}
    exec(SETUP_SOURCE + "\n" + source, namespace)
    return namespace


def _student_notebook(solution_cell):
    """The master as a student hands it in: their solution cell, the check cell without its
    hidden part (as released)."""
    nb = master_notebook()
    for cell in nb.cells:
        kind, _ = conventions.parse_grade_id(conventions.grade_id(cell))
        if kind == conventions.SOLUTION:
            cell.source = solution_cell
        elif kind == conventions.CHECK:
            cell.source = conventions.without_hidden_tests(cell.source)
    return nb


def _mkdirs(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


TOY_NAMES = re.compile(r"""99_toy|(?<![\w.])["']?99\.1["']?(?![\w.])""")


def shared_files_naming_the_toy_chapter():
    """Shared code (everything in the two packages but the chapter modules and the generated
    reference) that names the toy chapter or its task."""
    found = []
    for package in ("course/gptcourse", "grader"):
        for folder, _, names in os.walk(os.path.join(REPO, package)):
            for name in names:
                path = os.path.join(folder, name)
                if name.endswith(".py") and TOY_NAMES.search(open(path, encoding="utf-8").read()):
                    found.append(os.path.relpath(path, REPO))
    return found


def test_the_tests_tables_kept_by_hand_name_the_new_chapter_until_it_has_its_entries(toy, monkeypatch):
    """Outside its own files a chapter needs an entry in a few tables of the tests that no file of
    it can give (tests/chapter_entries.py): with nothing more than its pieces, the toy chapter is
    named in each. Where the entry follows from the master, a master that loads GPT-2 or draws a
    picture no test calls is named too. Nothing runs a notebook."""
    import chapter_entries as entries

    root, _ = toy
    master = root / "solutions" / f"{TOY}.ipynb"
    assert entries.missing({TOY: master}) == {entries.OUTPUT: [TOY], entries.STUDENT: [TOY], entries.TEST_FILE: [TOY]}

    nb = nbformat.read(master, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("base = pretrained_base(device)\n"
                                              "from gptcourse.plots import plot_doubled_tensor"))
    nbformat.write(nb, root / "with_gpt2_and_a_picture.ipynb")
    monkeypatch.delattr(sys.modules[f"gptcourse.checking.chapters.ch{TOY}"], "GRADING_DATA")
    lacking = entries.missing({TOY: root / "with_gpt2_and_a_picture.ipynb"})
    assert {what for what, chapters in lacking.items() if chapters == [TOY]} == {
        entries.OUTPUT, entries.STUDENT, entries.TEST_FILE, entries.DATA, entries.BRANCH, entries.PICTURES}


# docs/authoring.md, "Changing a case, a known mistake or a hint": the first words of each row, and
# the same change made to the toy chapter (to its grader's spec, its public spec or its master).
CHANGES = {
    "a public case": ("grader", lambda spec: dataclasses.replace(spec, public=lambda rng: [_toy_case(rng, 3, 3)])),
    "a hidden case": ("grader", lambda spec: dataclasses.replace(spec, hidden=lambda rng: [_toy_case(rng, 2, 2)])),
    "a known mistake of an output compared": ("grader", lambda spec: dataclasses.replace(
        spec, mistakes=lambda: [("the input is squared, not doubled", lambda x: x * x)])),
    "a known mistake of a random output": ("grader", lambda spec: dataclasses.replace(
        spec, extras=lambda case: {"internals/mistakes": [("the input is tripled", [0.5, 0.5])]})),
    "what else the judge needs": ("grader", lambda spec: dataclasses.replace(
        spec, extras=lambda case: {"internals/alternatives": []})),
    "a hint": ("public", lambda spec: dataclasses.replace(spec, hints=(lambda key, got, expected, case: "a hint",))),
    "the solution in a master": ("master", SOLUTION_SOURCE.replace("return 2 * x", "return 2 * x + 1")),
}
REBUILD = "python -m grader build --chapters NN_name"


def _toy_case(rng, rows, cols):
    return sys.modules[f"grader.chapters.ch{TOY}"]._case(rng, rows, cols)


def recipe_rows():
    """{first cell: 'then' cell} of the recipe's table in docs/authoring.md."""
    text = open(os.path.join(REPO, "docs", "authoring.md"), encoding="utf-8").read()
    section = text[text.index("## Changing a case, a known mistake or a hint"):]
    section = section[:section.index("\n## ", 1)]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| you change")]
    return {cells[0]: cells[2] for cells in rows}


def change_of(row):
    """The change of CHANGES that the recipe's row describes (the one whose first words it starts with)."""
    (change,) = [CHANGES[start] for start in CHANGES if row.startswith(start)] or [None]
    return change


def test_every_row_of_the_recipe_is_a_change_the_test_makes():
    rows = recipe_rows()
    assert [row for row in rows if change_of(row) is None] == [], "a row of the recipe that no change here makes"
    assert len(rows) == len(CHANGES), "a change here that no row of the recipe describes"


def build_the_toy_reference(build, root, monkeypatch, solution=SOLUTION_SOURCE):
    """The reference module of the toy chapter, built from its master (with this solution cell)."""
    nb = master_notebook()
    for cell in nb.cells:
        if conventions.parse_grade_id(conventions.grade_id(cell))[0] == conventions.SOLUTION:
            cell.source = solution
    nbformat.write(nb, root / "solutions" / f"{TOY}.ipynb")
    build.write_files(build.reference_files(build.build_manifest([TOY])))
    load_module(monkeypatch, f"grader.reference.ch{TOY}", root / "reference" / f"ch{TOY}.py")


def test_the_recipe_for_a_change_says_when_the_fixtures_must_be_made_again(toy, monkeypatch):
    """Each change of the recipe, made to the toy chapter, changes the self-check's fixtures
    exactly when the recipe says to build the chapter again."""
    root, _ = toy
    build = point_the_build_at(root, monkeypatch)
    build_the_toy_reference(build, root, monkeypatch)
    before = build.fixture_files([TOY])
    for row, then in recipe_rows().items():
        side, change = change_of(row)
        with monkeypatch.context() as changed:
            if side == "master":
                build_the_toy_reference(build, root, changed, solution=change)
            else:
                module = sys.modules[f"{'grader.chapters' if side == 'grader' else 'gptcourse.checking.chapters'}.ch{TOY}"]
                changed.setitem(module.SPECS, TASK, change(module.SPECS[TASK]))
            after = build.fixture_files([TOY])
        assert (after != before) == (REBUILD in then), (row, then)


def test_the_scan_for_the_toy_chapter_finds_a_module_that_names_it(monkeypatch, tmp_path):
    """The last assertion above can fail: a shared file that names the task is found."""
    package = tmp_path / "grader"
    package.mkdir()
    (package / "special.py").write_text('SPECIAL = {"99.1": "double"}\n')
    monkeypatch.setattr(sys.modules[__name__], "REPO", str(tmp_path))
    assert shared_files_naming_the_toy_chapter() == ["grader/special.py"]


@pytest.mark.slow
def test_the_release_of_a_new_chapter_is_made_from_its_master(toy, monkeypatch):
    """The student release (nbgrader generate_assignment, in a subprocess): the solution is a
    stub, the check cell keeps the self-check and loses the hidden tests."""
    root, _ = toy
    build = point_the_build_at(root, monkeypatch)
    (released,) = build.release_files([TOY]).items()
    assert released[0] == str(root / "course" / f"{TOY}.ipynb")
    cells = {conventions.grade_id(cell): cell.source for cell in nbformat.reads(released[1], as_version=4).cells}
    assert cells["task_99_1"] == 'def double(x):\n    """Twice the input tensor."""\n    # YOUR CODE HERE\n' \
                                 "    raise NotImplementedError()"
    assert cells["check_99_1"] == 'check("99.1", double)'
