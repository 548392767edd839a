"""What a chapter needs outside its own files, and the chapters that lack it.

A chapter's own files and its entry in the course table are found by name from the course table
(docs/authoring.md, "Adding a chapter, exactly"). A few things elsewhere need an entry per chapter
that no file of the chapter can give, so they are written by hand; a chapter left out of one of
them would be found by nobody. `missing()` names, for each, the chapters of the course table that
lack their entry: tests/test_chapter_structure.py fails on any, and
tests/test_adding_a_chapter.py shows a toy chapter, registered at run time, named in each (and
that docs/authoring.md lists the same tables as TABLES here).

- hand tables of the tests, read from their files (without running them): what a master prints
  when it runs (EXPECTED_OUTPUT, `{}` when nothing beyond its checks) and the corpus students of
  the nbgrader agreement test (CORPUS_STUDENTS, one file at least per chapter);
- a test file per chapter, tests/chapters/test_chNN.py;
- GRADING_DATA in the public chapter module (the data sets the grader's preflight fetches), each of
  them an entry of DATASETS in gptcourse/data.py (its address and checksum);
- what follows from the master: a master that loads GPT-2's weights has its GPT-2 branch run
  (BRANCHES of the GPT-2 branch test), and every picture it draws is called by a test of
  tests/course/ (test_plots_*.py, test_device_and_plots.py).
"""
import ast
import re
from pathlib import Path

import nbformat

from gptcourse import data
from gptcourse.checking.course import chapter_names, get_chapter, get_task
from gptcourse.checking.tasks import chapter_module

REPO = Path(__file__).resolve().parent.parent
MASTERS_TEST = "tests/notebooks/test_masters_run.py"
NBGRADER_TEST = "tests/notebooks/test_nbgrader_agreement.py"
GPT2_TEST = "tests/notebooks/test_gpt2_branch.py"
PICTURE_TESTS = ("tests/course/test_plots_*.py", "tests/course/test_device_and_plots.py")
# A master loads GPT-2's weights through one of these (gptcourse.gpt2_weights, gptcourse.finetune).
LOADS_GPT2 = ("try_load_gpt2_state_dict(", "pretrained_base(")

# The hand tables of the tests that keep an entry per chapter: (its name, the file that holds it).
TABLES = (("EXPECTED_OUTPUT", MASTERS_TEST), ("CORPUS_STUDENTS", NBGRADER_TEST), ("BRANCHES", GPT2_TEST))

# What a chapter may lack, as missing() says it.
OUTPUT = f"an entry in EXPECTED_OUTPUT of {MASTERS_TEST}"
STUDENT = f"a corpus file in CORPUS_STUDENTS of {NBGRADER_TEST}"
TEST_FILE = "a test file tests/chapters/test_chNN.py"
DATA = "GRADING_DATA in its public chapter module"
DATASET = "an entry in DATASETS of course/gptcourse/data.py for each data set its GRADING_DATA names"
BRANCH = f"an entry in BRANCHES of {GPT2_TEST} (its master loads GPT-2)"
PICTURES = "a test that calls each picture its master draws (tests/course/test_plots_*.py)"


def table_entries(path, name):
    """The keys of the dict (or the items of the list) assigned to `name` at the top of a file:
    read from its text, so that a slow test module is not imported to learn them."""
    for node in ast.parse((REPO / path).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            items = node.value.keys if isinstance(node.value, ast.Dict) else node.value.elts
            return [ast.literal_eval(item) for item in items]
    raise LookupError(f"{path} assigns no {name}")


def code_cells(notebook_path):
    """The sources of a notebook's code cells, without IPython's magics and shell escapes (not Python)."""
    return ["\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            for cell in nbformat.read(notebook_path, as_version=4).cells if cell.cell_type == "code"]


def names_imported_from_plots(notebook_path):
    """The names a notebook's code cells import with ``from gptcourse.plots import ...``: the
    pictures it draws."""
    names = set()
    for code in code_cells(notebook_path):
        if "gptcourse.plots" in code:
            names |= {alias.name for node in ast.walk(ast.parse(code))
                      if isinstance(node, ast.ImportFrom) and node.module == "gptcourse.plots" for alias in node.names}
    return names


def pictures_called_in_tests():
    text = "\n".join(path.read_text(encoding="utf-8") for pattern in PICTURE_TESTS for path in REPO.glob(pattern))
    return set(re.findall(r"\b(plot_\w+)\(", text))


def missing(masters=None, test_files=None):
    """{what: [chapters of the course table that lack it]}, only what some chapter lacks.
    masters: {chapter: path of its master}, by default solutions/<chapter>.ipynb; test_files:
    {chapter: path of its test module}, by default tests/chapters/test_chNN.py."""
    chapters = chapter_names()
    masters = {chapter: REPO / "solutions" / f"{chapter}.ipynb" for chapter in chapters} | dict(masters or {})
    test_files = {chapter: REPO / "tests" / "chapters" / f"test_ch{get_chapter(chapter).number}.py"
                  for chapter in chapters} | dict(test_files or {})
    with_output = set(table_entries(MASTERS_TEST, "EXPECTED_OUTPUT"))
    with_student = {get_task(item.split("/")[0]).chapter for item in table_entries(NBGRADER_TEST, "CORPUS_STUDENTS")}
    with_branch = set(table_entries(GPT2_TEST, "BRANCHES"))
    tested_pictures = pictures_called_in_tests()

    def loads_gpt2(chapter):
        return any(call in source for source in code_cells(masters[chapter]) for call in LOADS_GPT2)

    lacking = {
        OUTPUT: [c for c in chapters if c not in with_output],
        STUDENT: [c for c in chapters if c not in with_student],
        TEST_FILE: [c for c in chapters if not test_files[c].exists()],
        DATA: [c for c in chapters if not hasattr(chapter_module(c), "GRADING_DATA")],
        DATASET: [c for c in chapters if set(getattr(chapter_module(c), "GRADING_DATA", ())) - set(data.DATASETS)],
        BRANCH: [c for c in chapters if loads_gpt2(c) and c not in with_branch],
        PICTURES: [c for c in chapters if names_imported_from_plots(masters[c]) - tested_pictures],
    }
    return {what: found for what, found in lacking.items() if found}
