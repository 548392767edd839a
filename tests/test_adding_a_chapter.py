"""Adding a chapter by the steps docs/authoring.md gives ("Adding a chapter, exactly"), with a toy
chapter.

A toy chapter "99_toy" with one task, 99.1 `double(x)`, is added here by exactly the steps the
guide numbers 1 to 7, in their order (STEPS: a test fails when the guide's steps are others), all
of it in tmp_path:

1. its master notebook (the cell conventions: metadata, setup, task text, solution, check);
2. its public chapter module, gptcourse.checking.chapters.ch99_toy (CHAPTER, KEY_NAMES,
   GRADING_DATA, SPECS: the task's contract and probes);
3. its grader's chapter module, grader.chapters.ch99_toy (SPECS: the task's cases, one known mistake);
4. its corpus: a wrong and a correct student cell;
5. its test module, tests/chapters/test_ch99.py;
6. one line of the course table, a `Chapter(...)` (registered with register_chapter);
7. the build, for the toy chapter alone: its manifest entry, reference module and fixtures, the
   contract's section of its task and its row of the README's chapter table.

Then the real pipeline runs on it, unchanged: the self-check passes the correct cell and names the
known mistake of the wrong one; the grader (one worker process, no sandbox) grades two students'
notebooks; the contract's section of the task (grader/authoring/contract.py, what docs/contract.md and
`python -m grader where` print) is derived from the master, the course line, the contract and the
files. The toy needs nothing of the guide's step 8 (shared files: a toy model, a data set,
pictures, a kind); step 9's tables, read from the guide, must be the ones tests/chapter_entries.py
checks, and those checks name the toy in each of them, and in nothing else. Last, the point: no
shared module names the chapter or its task.

What stands in for "the file is in the repository":
- the modules are loaded from tmp_path into sys.modules (this process), and a sitecustomize.py
  on the worker's PYTHONPATH registers the same course line and module there (the worker is
  another process, started by the real pool);
- the build's output folders (grader.paths.SOLUTIONS, build.REFERENCE, build.FIXTURES, build.README,
  the reference manifest grader.paths.MANIFEST, the self-check's FIXTURE_DIR) point into tmp_path,
  and the build is asked for the toy chapter alone (its functions take the chapters, default every
  chapter of the course table): building the nine real chapters would take minutes.
The student release (`build.release_files`: nbgrader's generate_assignment in a subprocess)
is the last, `slow`, test.

The second test shows each check of steps 8 and 9 naming the toy chapter while it lacks the
entry. The third makes each change of docs/authoring.md's recipe ("Changing a case, a known
mistake or a hint") to the toy chapter, row by row as the guide has them: its fixtures change
exactly when the recipe says to build the chapter again.

Cost (2 shared CPU cores): about 7 s for the first test, most of it the worker host importing
torch; under a second for the second; a few seconds for the third; about 7 s for the slow one.
"""
import dataclasses
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gptcourse.checking import conventions, course, selfcheck
from gptcourse.checking.selfcheck import SelfCheckFailed

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOY = "99_toy"
TASK = "99.1"
MISTAKE = "the input is tripled, not doubled"

# ------------------------------------------------------------------------------------------
# What the toy chapter is made of
# ------------------------------------------------------------------------------------------

# 6. The one line of the course table (gptcourse/checking/course.py), evaluated in course.py's namespace.
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
from grader.nbgrading.bridge import run_hidden_tests
run_hidden_tests("99.1", globals())
### END HIDDEN TESTS
check("99.1", double)'''

# 4. The corpus: realistic student cells, one wrong (the known mistake), one correct, each with
# the header lines of tests/corpus/README.md.
CORPUS = {
    "wrong_tripled.py": "# expect: wrong\n# mistake: triples\n# keywords: tripled\ndef double(x):\n    return x * 3\n",
    "correct_sum.py": "# expect: correct\n# mistake: none (a sum)\ndef double(x):\n    return x + x\n",
}

# 5. Its test module: the chapter's own checks (here, of the reference the build makes).
TEST_MODULE = '''\
"""Chapter 99, a toy: the reference doubles."""
import torch


def test_the_reference_doubles():
    from grader.reference.ch99_toy import double

    assert double(torch.tensor([1.5, -2.0])).tolist() == [3.0, -4.0]
'''


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


# ------------------------------------------------------------------------------------------
# Putting the chapter where the course finds it (this process, and the grader's worker)
# ------------------------------------------------------------------------------------------

def load_module(monkeypatch, name, path):
    """Import the file at `path` as module `name` (taken away again after the test)."""
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    monkeypatch.setitem(sys.modules, name, module)
    module_spec.loader.exec_module(module)
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


def write(root, relative, text):
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_text(text)


def point_the_build_at(root, monkeypatch):
    """The build reads the master from root/solutions and writes under root (README.md: a copy)."""
    from grader.authoring import build
    from grader import paths

    monkeypatch.setattr(paths, "SOLUTIONS", str(root / "solutions"))
    for name, folder in (("REFERENCE", "reference"), ("FIXTURES", "fixtures"), ("COURSE", "course")):
        monkeypatch.setattr(build, name, str(root / folder))
    if not (root / "README.md").exists():
        write(root, "README.md", open(build.README, encoding="utf-8").read())
    monkeypatch.setattr(build, "README", str(root / "README.md"))
    return build


# ------------------------------------------------------------------------------------------
# The guide's steps, as the toy chapter takes them
# ------------------------------------------------------------------------------------------

def write_master(root, monkeypatch):
    write(root, f"solutions/{TOY}.ipynb", nbformat.writes(master_notebook()))


def write_public_module(root, monkeypatch):
    write(root, f"course/gptcourse/checking/chapters/ch{TOY}.py", PUBLIC_MODULE)
    load_module(monkeypatch, f"gptcourse.checking.chapters.ch{TOY}",
                root / f"course/gptcourse/checking/chapters/ch{TOY}.py")


def write_grader_module(root, monkeypatch):
    write(root, f"grader/chapters/ch{TOY}.py", GRADER_MODULE)
    load_module(monkeypatch, f"grader.chapters.ch{TOY}", root / f"grader/chapters/ch{TOY}.py")


def write_corpus(root, monkeypatch):
    for name, source in CORPUS.items():
        write(root, f"tests/corpus/{TASK}/{name}", source)


def write_test_module(root, monkeypatch):
    write(root, "tests/chapters/test_ch99.py", TEST_MODULE)


def add_course_line(root, monkeypatch):
    course.register_chapter(eval(COURSE_LINE, vars(course)))


def build_the_chapter(root, monkeypatch):
    """`make release`, for the toy chapter alone: the reference module and the manifest (then
    imported, as the grader imports it), the self-check's fixtures, the contract page's section and
    the README's row."""
    build = point_the_build_at(root, monkeypatch)
    build.write_files(build.reference_files(build.build_manifest([TOY])))
    load_module(monkeypatch, f"grader.reference.ch{TOY}", root / "reference" / f"ch{TOY}.py")
    build.write_files(build.fixture_files([TOY]))
    build.write_files(build.readme_files())


# The numbered steps of docs/authoring.md's "Adding a chapter, exactly" that make a chapter, by the
# words each starts with (the file it writes or the command it runs), and what they do here.
STEPS = {
    "solutions/NN_name.ipynb": write_master,
    "course/gptcourse/checking/chapters/chNN_name.py": write_public_module,
    "grader/chapters/chNN_name.py": write_grader_module,
    "tests/corpus/<task>/": write_corpus,
    "tests/chapters/test_chNN.py": write_test_module,
    "course/gptcourse/checking/course.py": add_course_line,
    "make release": build_the_chapter,
}
BUILD = "make release"


def guide_section():
    """docs/authoring.md's "Adding a chapter, exactly", up to its first sub-section (the chapters'
    worked examples follow it)."""
    text = open(os.path.join(REPO, "docs", "authoring.md"), encoding="utf-8").read()
    section = text[text.index("## Adding a chapter, exactly"):]
    return section[:section.index("\n### ")]


def documented_steps():
    """{number: text} of the guide's numbered steps (a step runs to the next, or to a blank line)."""
    found = re.findall(r"^(\d+)\. (.*?)(?=^\d+\. |\n\n|\Z)", guide_section(), re.MULTILINE | re.DOTALL)
    return {int(number): text for number, text in found}


def first_words(step):
    """The file a step writes or the command it runs: the backquoted words it starts with."""
    match = re.match(r"`([^`]+)`", step)
    return match.group(1) if match else None


# After the build the guide has two more steps, which the toy chapter needs no file for: the
# shared files a chapter adds to when it needs what they hold (none, for the toy), and the tests'
# tables (each check names the toy, see below).
LATER_STEPS = ("Where the chapter needs what a shared file holds", "The entries the tests' own tables keep")


def documented_tables():
    """The tests' tables the guide's last step names: (table, file), written `TABLE` in `file`."""
    return set(re.findall(r"`([A-Z_]+)` in\s+`(tests/[^`]+)`", documented_steps()[len(STEPS) + len(LATER_STEPS)]))


def test_the_guide_s_steps_are_the_steps_this_test_takes_in_their_order():
    steps = documented_steps()
    assert list(steps) == list(range(1, len(STEPS) + len(LATER_STEPS) + 1)), list(steps)
    assert [first_words(steps[number]) for number in range(1, len(STEPS) + 1)] == list(STEPS)
    later = [steps[number] for number in range(len(STEPS) + 1, len(steps) + 1)]
    assert [text.startswith(start) for text, start in zip(later, LATER_STEPS)] == [True] * len(LATER_STEPS), later


def test_the_guide_names_the_tables_the_checks_know_and_files_that_exist():
    import chapter_entries as entries

    assert documented_tables() == set(entries.TABLES)
    shared = documented_steps()[len(STEPS) + 1]
    paths = set(re.findall(r"`((?:course|tests)/[^`\s]+)`", shared))
    assert len(paths) >= 6, paths
    assert [path for path in sorted(paths) if not list(Path(REPO).glob(path))] == []


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy chapter, added by the guide's steps up to its build; undone afterwards."""
    selfcheck.load_fixtures.cache_clear()
    try:
        for words, step in STEPS.items():
            if words != BUILD:
                step(tmp_path, monkeypatch)
        yield tmp_path
    finally:
        course.unregister_chapter(TOY)
        selfcheck.load_fixtures.cache_clear()


def repository_status():
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout


# ------------------------------------------------------------------------------------------
# The test
# ------------------------------------------------------------------------------------------

def test_a_chapter_added_by_the_guide_s_steps_is_built_checked_graded_and_described(toy, monkeypatch):
    import chapter_entries as entries
    from grader.authoring import build
    from grader.grading import engine
    from grader import paths
    from grader.authoring import contract as contract_page

    root = toy
    status_before = repository_status()

    # The last step, the build: the master -> the manifest entry and the reference module, the
    # self-check's fixtures (from the reference and the grader's chapter module: its public cases
    # and known mistake), the README's chapter table.
    STEPS[BUILD](root, monkeypatch)
    entry = build.chapter_manifest(TOY)
    assert entry["setup"] == [SETUP_SOURCE + "\n"]
    assert entry["tasks"][TASK]["points"] == 1
    assert "BEGIN SOLUTION" not in entry["tasks"][TASK]["source"] and "return 2 * x" in entry["tasks"][TASK]["source"]
    assert "run_hidden_tests" not in entry["tasks"][TASK]["check_source"]
    monkeypatch.setattr(selfcheck, "FIXTURE_DIR", str(root / "fixtures"))
    (fixture,) = selfcheck.load_fixtures(TOY)[TASK]
    assert fixture["mistakes"][0]["message"] == MISTAKE
    assert "| 99 A toy chapter | [`course/99_toy.ipynb`](course/99_toy.ipynb) | 99.1 [B] – 99.1 [B] |\n" in \
        (root / "README.md").read_text()

    # Its test module passes on the reference the build made.
    namespace = {}
    exec(TEST_MODULE, namespace)
    namespace["test_the_reference_doubles"]()

    # The self-check in a student's notebook: the correct cell passes, the wrong one is named.
    cells = {name: _defined(source)["double"] for name, source in CORPUS.items()}
    selfcheck.check(TASK, cells["correct_sum.py"])
    with pytest.raises(SelfCheckFailed, match=f"doubled tensor: wrong\nIt looks like {MISTAKE}"):
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

    # The contract's section: the contract in the public module, and what the course line, the
    # master and the files say; every piece found.
    section = contract_page.task_section(TASK, entry, root)
    assert section.startswith("### Task 99.1 [B] — Doubling a tensor\n")
    for derived in ("points: 1.", "Graded: `double(x)`", "Returns twice its input", "How it doubles",
                    "solution cell `task_99_1`, check cell `check_99_1`",
                    '`course/gptcourse/checking/chapters/ch99_toy.py`, `SPECS["99.1"]`',
                    '`grader/chapters/ch99_toy.py`, `SPECS["99.1"]`: public cases, hidden cases, known mistakes',
                    "`tests/corpus/99.1/`, 1 wrong and 1 correct cells", "tests: `tests/chapters/test_ch99.py`;"):
        assert derived in section, (derived, section)
    assert "(missing)" not in section and "(no SPECS entry)" not in section

    # Step 9: what the chapter still lacks is exactly an entry in the tests' tables the guide names
    # (those that apply: its master loads no GPT-2, so it needs no GPT-2 branch).
    lacking = entries.missing({TOY: root / "solutions" / f"{TOY}.ipynb"},
                              test_files={TOY: root / "tests" / "chapters" / "test_ch99.py"})
    assert {what for what, chapters in lacking.items() if TOY in chapters} == {entries.OUTPUT, entries.STUDENT}

    # The point: nothing shared names the chapter, and nothing was written into the repository.
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


def test_the_checks_of_steps_8_and_9_name_the_new_chapter_until_it_has_its_entries(toy, monkeypatch):
    """Outside its own files a chapter needs entries in a few tables of the tests that no file of
    it can give, and in shared files where it needs what they hold (tests/chapter_entries.py):
    with nothing more than its pieces, the toy chapter is named in each table, and in its test
    file until step 5 is taken. Where the entry follows from the master or the public module, a
    master that loads GPT-2 or draws a picture no test calls, a module without GRADING_DATA or one
    naming a data set DATASETS lacks, is named too. Nothing runs a notebook."""
    import chapter_entries as entries

    root = toy
    master = root / "solutions" / f"{TOY}.ipynb"
    assert entries.missing({TOY: master}) == {entries.OUTPUT: [TOY], entries.STUDENT: [TOY], entries.TEST_FILE: [TOY]}
    assert entries.missing({TOY: master}, test_files={TOY: root / "tests" / "chapters" / "test_ch99.py"}) == {
        entries.OUTPUT: [TOY], entries.STUDENT: [TOY]}

    nb = nbformat.read(master, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("base = pretrained_base(device)\n"
                                              "from gptcourse.plots import plot_doubled_tensor"))
    nbformat.write(nb, root / "with_gpt2_and_a_picture.ipynb")
    public = sys.modules[f"gptcourse.checking.chapters.ch{TOY}"]
    monkeypatch.setattr(public, "GRADING_DATA", ("the-verdict", "doubled-numbers"))
    lacking = entries.missing({TOY: root / "with_gpt2_and_a_picture.ipynb"})
    assert {what for what, chapters in lacking.items() if chapters == [TOY]} == {
        entries.OUTPUT, entries.STUDENT, entries.TEST_FILE, entries.DATASET, entries.BRANCH, entries.PICTURES}
    monkeypatch.delattr(public, "GRADING_DATA")
    assert entries.DATA in entries.missing({TOY: master})


# docs/authoring.md, "Changing a case, a known mistake or a hint": the first words of each row, and
# the same change made to the toy chapter (to its GraderSpec, its TaskSpec or its master).
CHANGES = {
    "a public case": ("grader", lambda entry: dataclasses.replace(entry, public=lambda rng: [_toy_case(rng, 3, 3)])),
    "a hidden case": ("grader", lambda entry: dataclasses.replace(entry, hidden=lambda rng: [_toy_case(rng, 2, 2)])),
    "a known mistake of an output compared": ("grader", lambda entry: dataclasses.replace(
        entry, mistakes=lambda: [("the input is squared, not doubled", lambda x: x * x)])),
    "a known mistake of a random output": ("grader", lambda entry: dataclasses.replace(
        entry, extras=lambda case: {"internals/mistakes": [("the input is tripled", [0.5, 0.5])]})),
    "what else the judge needs": ("grader", lambda entry: dataclasses.replace(
        entry, extras=lambda case: {"internals/alternatives": []})),
    "a hint": ("public", lambda entry: dataclasses.replace(entry, hints=(lambda key, got, expected, case: "a hint",))),
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
    root = toy
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
    root = toy
    build = point_the_build_at(root, monkeypatch)
    (released,) = build.release_files([TOY]).items()
    assert released[0] == str(root / "course" / f"{TOY}.ipynb")
    cells = {conventions.grade_id(cell): cell.source for cell in nbformat.reads(released[1], as_version=4).cells}
    assert cells["task_99_1"] == 'def double(x):\n    """Twice the input tensor."""\n    # YOUR CODE HERE\n' \
                                 "    raise NotImplementedError()"
    assert cells["check_99_1"] == 'check("99.1", double)'
