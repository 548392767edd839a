"""The grader's folders show its parts: the top level holds the command line and what every part
shares; each part is a package whose docstring names every module in it, so a module added
without a word about where it belongs fails here."""
import ast
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]
GRADER = REPO / "grader"

# The command line, the paths every part shares, and the name that nbgrader course directories
# made before the folders existed import their hidden tests from.
TOP_LEVEL_MODULES = {"__init__.py", "__main__.py", "paths.py", "nbgrader_bridge.py"}
PARTS = {"grading", "nbgrading", "cluster", "outputs", "authoring", "hub", "chapters", "reference"}


def test_the_grader_s_top_level_holds_only_the_command_line_and_its_parts():
    modules = {p.name for p in GRADER.iterdir() if p.suffix == ".py"}
    folders = {p.name for p in GRADER.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert modules == TOP_LEVEL_MODULES, f"put {sorted(modules - TOP_LEVEL_MODULES)} in one of {sorted(PARTS)}"
    assert folders == PARTS, f"unexpected folders {sorted(folders - PARTS)}; missing {sorted(PARTS - folders)}"


def _docstring(path):
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def test_each_part_s_docstring_names_its_modules():
    # The reference and the chapter modules are lists of chapters, named by the course table.
    for part in sorted(PARTS - {"reference", "chapters"}):
        folder = GRADER / part
        described = _docstring(folder / "__init__.py")
        assert described, f"grader/{part}/__init__.py needs a docstring: what this part of the grader does"
        missing = [p.stem for p in sorted(folder.glob("*.py")) if p.stem != "__init__" and p.stem not in described]
        assert not missing, f"grader/{part}/__init__.py's docstring does not mention {missing}"


def test_the_command_line_s_modules_exist():
    from grader.__main__ import MODULES

    for command, module in MODULES.items():
        path = REPO / (module.replace(".", "/") + ".py")
        assert path.is_file(), f"python -m grader {command}: {module} is not a module of the grader"


def test_only_grader_paths_finds_the_checkout_from_its_own_file():
    """A module that works out the checkout's root as 'two folders above this file' breaks
    silently when it moves into a folder (the feedback scrubber and the sandbox did, once): every
    module takes ROOT from grader/paths.py."""
    found = [str(p.relative_to(REPO)) for p in sorted(GRADER.rglob("*.py"))
             if p.name != "paths.py" and "dirname(os.path.dirname(os.path.abspath(__file__)))" in p.read_text()]
    assert not found, f"{found}: use grader.paths.ROOT"


def test_the_readme_s_map_of_the_repository_names_every_part_of_the_grader():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## Repository"):]
    missing = [part for part in sorted(PARTS) if f"\n  {part}/" not in block]
    assert not missing, f"README.md's '## Repository' map lacks grader/'s {missing}"
