"""The gptcourse package is split by who uses it: its top level is what notebooks call, and
gptcourse.checking is the machinery behind the self-checks and the grader. These tests keep the
seam where it is: notebooks import only the top level, each part's docstring is a true map of
its modules, every import a docstring shows works, and importing the machinery's package costs
nothing before torch is needed."""

from __future__ import annotations

import ast
import pkgutil
import re
import subprocess
import sys

import nbformat
import pytest

import gptcourse
import gptcourse.checking as checking
from factory import REPO

NOTEBOOKS = sorted((REPO / "solutions").glob("*.ipynb")) + sorted((REPO / "course").glob("*.ipynb"))


def gptcourse_imports(notebook_path):
    """(module, names) for every import of gptcourse in a notebook's code cells."""
    found = []
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        if cell.cell_type != "code" or "gptcourse" not in cell.source:
            continue
        # IPython's magics and shell escapes are not Python: leave those lines out.
        code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gptcourse":
                found.append((node.module, [alias.name for alias in node.names]))
            elif isinstance(node, ast.Import):
                found += [(alias.name, []) for alias in node.names if alias.name.split(".")[0] == "gptcourse"]
    return found


def top_level_modules(package):
    return sorted(info.name for info in pkgutil.iter_modules(package.__path__))


def test_notebooks_import_only_the_top_level_of_gptcourse():
    """A notebook's imports name gptcourse itself or one of its top-level modules: the checking
    machinery can move about inside gptcourse.checking without a notebook changing."""
    imports = {path.relative_to(REPO).as_posix(): gptcourse_imports(path) for path in NOTEBOOKS}
    assert all(imports.values()), [path for path, found in imports.items() if not found]  # the parser found them
    top = set(top_level_modules(gptcourse))
    wrong = {}
    for path, found in imports.items():
        for module, names in found:
            parts = module.split(".")
            if len(parts) > 2 or (len(parts) == 2 and parts[1] not in top) or "checking" in parts:
                wrong.setdefault(path, []).append(module)
            elif module == "gptcourse":
                missing = [name for name in names if name not in gptcourse.__all__]
                if missing:
                    wrong.setdefault(path, []).append(f"gptcourse: {missing}")
    assert not wrong, wrong


@pytest.mark.parametrize("package", [gptcourse, checking], ids=lambda p: p.__name__)
def test_each_part_of_the_package_names_all_its_modules_in_its_docstring(package):
    """The docstrings of gptcourse/__init__.py and gptcourse/checking/__init__.py are the map a
    newcomer reads first: every module and subpackage beside them is named there."""
    names = [name for name in top_level_modules(package) if name != "checking" or package is not gptcourse]
    assert len(names) >= 10, names
    unnamed = [name for name in names if name not in package.__doc__]
    assert not unnamed, f"{package.__name__}'s docstring does not say what {unnamed} are for"


def test_the_machinery_is_not_at_the_top_level():
    """What the grader and the self-checks share lives in gptcourse.checking only."""
    machinery = set(top_level_modules(checking))
    assert {"probes", "judge", "selfcheck", "records", "course", "worker_host"} <= machinery
    assert not machinery & set(top_level_modules(gptcourse)), "a module is both at the top and in checking"


def test_importing_the_machinery_package_imports_neither_torch_nor_numpy():
    """The grader's worker host starts as `python -m gptcourse.checking.worker_host` and loads
    torch itself, once, before it forks: its packages' __init__ files must not."""
    code = ("import sys, gptcourse.checking; "
            "print(sorted(m for m in ('torch', 'numpy', 'nbformat') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


# An import statement shown in backquotes in a docstring: `from gptcourse.checking import kinds`.
SHOWN_IMPORT = re.compile(r"`((?:from [\w.]+ import [\w, ]+)|(?:import [\w.]+))`")


def imports_shown_in_docstrings(root):
    """{import statement: the first file whose docstrings (of the module, a class or a function) show it}."""
    shown = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                for statement in SHOWN_IMPORT.findall(ast.get_docstring(node) or ""):
                    shown.setdefault(statement, str(path.relative_to(REPO)))
    return shown


def test_every_import_a_docstring_shows_works():
    """What a docstring tells a reader to type runs: the kinds' docstring once showed
    `from gptcourse import kinds`, an ImportError."""
    shown = imports_shown_in_docstrings(REPO / "course" / "gptcourse")
    failed = []
    for statement, where in shown.items():
        try:
            exec(statement, {})
        except ImportError as exc:
            failed.append(f"{where}: {statement}: {exc}")
    assert not failed, "\n".join(failed)
    assert "from gptcourse.checking import kinds" in shown, shown  # the scan finds what it looks for
