"""What the chapters' text may claim (issue: every sentence true of the run the student sees).

- No notebook text and no message of the course names a file of the repository outside
  `course/`: a student on Colab or a hub has `course/` (the notebooks, the package) and nothing
  else. Documentation pages are linked at their published address (gptcourse.links.docs_url).
- No sentence of a notebook tells the authors' history ("when this notebook was written", "we
  measured", "not measured yet"): a figure is either printed by the cell beside it or recorded,
  with where and how (the benchmark notes).
"""
import ast
import json
import re

import pytest

from factory import REPO

MASTERS = sorted((REPO / "solutions").glob("*.ipynb"))
# A path of the repository outside course/: benchmarks/x.py, docs/x.md, grader/..., tests/...
REPOSITORY_PATH = re.compile(r"(?<![\w/.-])(?:benchmarks|docs|grader|tests|solutions)/[\w./-]+")
URL = re.compile(r"https?://\S+")
# The authors' history, in the forms it took in the chapters.
HISTORY = re.compile(r"when (?:this notebook|it) was written|\bwe (?:measured|saw|also trained)\b|\bour runs?\b|"
                     r"not measured yet|still pretrained|does not fetch them yet|the course's CPU run printed|"
                     r"close, not there yet", re.IGNORECASE)


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def repository_paths(text):
    return REPOSITORY_PATH.findall(URL.sub("", text))


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.stem)
def test_a_notebook_names_no_file_outside_course(path):
    named = [(cell.get("id"), found) for cell in cells(path) for found in repository_paths("".join(cell["source"]))]
    assert named == [], f"{path.name}: link to the published page instead (gptcourse.links.docs_url): {named}"


SHOWN_BY = {"say", "print", "show_text", "wrap_at_words"}


def _strings_shown(tree):
    """The string literals a module shows: in what it says or prints, and in the errors it raises."""
    shown = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in SHOWN_BY or name.endswith(("Error", "Failed", "Exception")):
            shown += [inner.value for argument in node.args for inner in ast.walk(argument)
                      if isinstance(inner, ast.Constant) and isinstance(inner.value, str)]
    return shown


def test_the_course_package_says_no_file_outside_course():
    named = []
    for module in sorted((REPO / "course" / "gptcourse").rglob("*.py")):
        for text in _strings_shown(ast.parse(module.read_text(encoding="utf-8"))):
            named += [(module.name, found) for found in repository_paths(text)]
    assert named == [], named


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.stem)
def test_no_sentence_tells_the_authors_history(path):
    told = [(cell.get("id"), found.group(0)) for cell in cells(path) if cell["cell_type"] == "markdown"
            for found in HISTORY.finditer(" ".join("".join(cell["source"]).split()))]
    assert told == [], f"{path.name}: say what the run prints, or what was recorded where: {told}"


def test_the_checks_find_what_they_look_for():
    assert repository_paths("see `benchmarks/generate_bench.py` and docs/benchmarks.md") == [
        "benchmarks/generate_bench.py", "docs/benchmarks.md"]
    assert repository_paths("[notes](https://github.com/x/y/blob/main/docs/benchmarks.md)") == []
    assert HISTORY.search("this notebook measured, when it was written, 98.9 %")
