"""The course's contract lives in the repository.

A clone used to have no description of what each task must do: the code pointed at a file in
a folder beside the checkout, which a clone does not have. Now each task's TaskSpec, in its
public chapter module, holds what the checks pin down and what they leave free (beside its
probes, no longer in one shared file; gptcourse/checking/contract.py keeps the types and the
rules for every task); grader/authoring/contract.py adds what the course table and the masters say and
renders docs/contract.md (its freshness: tests/notebooks/test_generated.py) and
`python -m grader where <task>`. These tests keep the entries in step with the course table, the
command in step with the page, the page's pointers true, and every file of the repository free
of pointers outside it (the data mirror aside).
"""
import dataclasses
import argparse
import ast
import re
import subprocess
import sys

from factory import REPO
from gptcourse.checking import contract
from gptcourse.checking.chapters import contract_of, reference_values
from gptcourse.checking.tasks import CHAPTERS, TASKS, chapter_module
from grader.authoring import contract as contract_page

PAGE = REPO / "docs" / "contract.md"


def test_every_task_of_the_course_table_has_a_contract():
    for task in TASKS:
        entry = contract_of(task.id)
        assert isinstance(entry, contract.Contract), task.id
        assert entry.pinned and all(isinstance(line, str) and line for line in entry.pinned + entry.free), task.id


def test_a_task_without_a_contract_is_named_with_the_file_to_add_it_to(monkeypatch):
    task = TASKS[-1]
    entries = chapter_module(task.chapter).SPECS
    monkeypatch.setitem(entries, task.id, dataclasses.replace(entries[task.id], contract=None))
    try:
        contract_of(task.id)
    except KeyError as exc:
        assert f"course/gptcourse/checking/chapters/ch{task.chapter}.py" in exc.args[0] and task.id in exc.args[0]
        assert (REPO / contract.public_module_path(task.chapter)).exists()
    else:
        raise AssertionError("a task without a contract was not reported")


def test_each_reference_value_names_a_test_that_exists():
    chapters_with_values = [chapter for chapter in CHAPTERS if reference_values(chapter)]
    assert len(chapters_with_values) >= 5, chapters_with_values
    for chapter in chapters_with_values:
        for value in reference_values(chapter):
            assert isinstance(value, contract.ReferenceValue), chapter
            path, _, name = value.test.partition("::")
            tree = ast.parse((REPO / path).read_text())
            assert name in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, value.test


def test_where_prints_the_task_s_section_of_the_page():
    """`python -m grader where 6.3`, as a user runs it: exactly the page's section of the task."""
    result = subprocess.run([sys.executable, "-m", "grader", "where", "6.3"], cwd=REPO, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    page = PAGE.read_text()
    start = page.index("### Task 6.3 [A]")
    end = page.index("\n\n### Task 6.4 ", start)
    assert result.stdout == page[start:end] + "\n"


def test_where_an_unknown_task_says_so_in_one_line_and_exits_2(capsys):
    assert contract_page.main(argparse.Namespace(task="9.9")) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "unknown task '9.9'" in err


def test_a_section_shows_what_the_master_says_of_the_task():
    """Signatures and points come from the master (here: a changed manifest entry), not from the page."""
    task = TASKS[0]
    entry = contract_page.load_manifest()[task.chapter]
    built = dict(entry["tasks"][task.id], points=7,
                 source=f"class {task.names[0]}(Base):\n    def __init__(self, vocab, size=3):\n        pass\n"
                        f"    def encode(self, text) -> list:\n        pass\n    def _private(self):\n        pass\n")
    section = contract_page.task_section(task.id, dict(entry, tasks={task.id: built}))
    assert "points: 7." in section
    assert f"- Graded: `{task.names[0]}(vocab, size=3)`, a subclass of `Base`, with `.encode(text) -> list`" in section
    assert "_private" not in section


def test_every_file_a_section_points_at_exists():
    page = PAGE.read_text()
    assert "(missing)" not in page and "(no SPECS entry)" not in page
    pointed = set(re.findall(r"`((?:solutions|course|grader|tests)/[^`\s]+)`", page))
    assert len(pointed) > 50, sorted(pointed)
    assert [path for path in sorted(pointed) if not (REPO / path.split("::")[0]).exists()] == []


# Built from pieces, so that this file does not hold what it looks for.
SHARED = ".." + "/shared"
OUTSIDE = re.compile(re.escape(SHARED) + r"(?!/data\b)|" + "|".join(re.escape(name) for name in (
    "COURSE" + "_SPEC", "CHAPTER" + "_DONE", "DESIGN" + ".md")))


def points_outside(text):
    return OUTSIDE.findall(text)


def test_the_scan_tells_the_data_mirror_from_a_pointer_outside():
    assert points_outside(f"the contract: {SHARED}/" + "COURSE" + "_SPEC.md")
    assert points_outside("see " + "DESIGN" + ".md") and points_outside(f"cp {SHARED}/hooks/x .")
    assert points_outside(f"{SHARED}/database")  # a name that merely starts like the mirror's
    assert not points_outside(f"GPTCOURSE_DATA_MIRROR={SHARED}/data make test")
    assert not points_outside(f"DATA_MIRROR ?= $(abspath {SHARED}/data)")


def test_no_file_of_the_repository_points_outside_it():
    """A clone has the repository and the data mirror `../shared/data`, nothing else of that folder."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    paths = [name for name in listed.decode().split("\0") if name]
    assert len(paths) > 100
    found = {}
    for path in paths:
        file = REPO / path
        if file.is_file():
            hits = points_outside(file.read_bytes().decode("utf-8", errors="replace"))
            if hits:
                found[path] = hits
    assert found == {}


def test_the_readme_points_at_the_rules_for_every_task_rather_than_repeating_them():
    """The README's "How it grades" once repeated the common rules in its own words:
    it now links their one statement, the page's section, which must exist under that name."""
    readme = (REPO / "README.md").read_text()
    assert "(docs/contract.md#rules-for-every-task)" in readme
    assert "\n## Rules for every task\n" in PAGE.read_text()
    assert all(rule[:60] not in readme.replace("\n", " ") for rule in contract.COMMON_RULES)


def test_a_section_does_not_call_every_task_s_extras_accepted_alternatives():
    """6.5's extras are what its dropout and cache judges need (the outputs every pattern of
    dropped weights can give), no alternative reading of the contract: `where` used to call every
    task's extras "accepted alternatives"."""
    from grader.chapters import expectation_extras, public_cases

    keys = {key for case in public_cases("6.5") for key in expectation_extras(case)}
    assert keys and "internals/alternatives" not in keys, keys
    section = contract_page.task_section("6.5")
    assert "extras (what the judge needs besides the reference's observations" in section
    assert "alternatives" not in section


def test_a_chapter_section_lists_what_its_setup_cell_binds():
    """tests/corpus/README.md once listed, by hand, what each chapter's setup cell gives a corpus file
    (chapters 01 to 05 in one paragraph, and a chapter 09 'without carried names' that has some);
    the page now writes the list from the master."""
    source = ("import math\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader as DL, Dataset\n"
              "TOKENS = 3\n_ = print\ntokenizer = object()\ndef helper():\n    inner = 1\nclass Toy:\n    pass\n")
    assert contract_page.names_bound([source]) == ["math", "nn", "DL", "Dataset", "TOKENS", "tokenizer", "helper",
                                                  "Toy"]
    built = contract_page.load_manifest()
    for chapter in CHAPTERS:
        names = contract_page.names_bound(built[chapter]["setup"])
        namespace = {}
        for setup in built[chapter]["setup"]:
            exec(setup, namespace)
        assert names and set(names) <= set(namespace), chapter
        assert f"what its setup cell binds: {', '.join(f'`{name}`' for name in names)};" in PAGE.read_text(), chapter


def test_the_contract_s_types_import_no_chapter():
    """gptcourse/checking/contract.py holds the types the chapter modules import; it imports none of
    them back (not even inside a function: a circle either way)."""
    tree = ast.parse((REPO / "course" / "gptcourse" / "checking" / "contract.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name.startswith(("gptcourse.checking", "."))}, imported
