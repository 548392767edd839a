"""gptcourse.plots is a package, one module per part of the course; the notebooks import every
picture from the package itself. These tests guard the seams of that split: a name the notebooks
import that the package no longer re-exports, a new picture added to a chapter module but not to
the package, a subpackage of gptcourse the wheel would leave out."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import tomllib

import matplotlib

matplotlib.use("Agg")  # draw into memory: no window, works without a display

from chapter_entries import names_imported_from_plots  # noqa: E402
from factory import REPO  # noqa: E402
from gptcourse import plots  # noqa: E402


def test_every_name_a_notebook_imports_from_plots_is_there():
    notebooks = sorted((REPO / "solutions").glob("*.ipynb")) + sorted((REPO / "course").glob("*.ipynb"))
    imported = {path.relative_to(REPO).as_posix(): names_imported_from_plots(path) for path in notebooks}
    # Every chapter draws something: a parser that found nothing would make this test pass on nothing.
    assert all(imported.values()), [path for path, names in imported.items() if not names]
    missing = {path: sorted(name for name in names if not hasattr(plots, name)) for path, names in imported.items()}
    assert not any(missing.values()), {path: names for path, names in missing.items() if names}


def names_defined_in(module):
    """The public names a module's own top-level code defines (not the ones it imports)."""
    tree = ast.parse(inspect.getsource(module))
    defined = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    defined += [target.id for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)]
    return [name for name in defined if not name.startswith("_")]


def test_the_package_re_exports_every_public_name_of_its_modules():
    modules = [importlib.import_module(f"gptcourse.plots.{info.name}") for info in pkgutil.iter_modules(plots.__path__)]
    assert len(modules) >= 8, [module.__name__ for module in modules]
    for module in modules:
        defined = names_defined_in(module)
        assert defined, f"found no names in {module.__name__}"
        not_exported = [name for name in defined if getattr(plots, name, None) is not getattr(module, name)]
        assert not not_exported, f"{module.__name__} defines {not_exported}, which gptcourse.plots does not re-export"


def test_the_wheel_lists_every_subpackage_of_gptcourse():
    listed = set(tomllib.loads((REPO / "course" / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    package_root = REPO / "course"
    found = {".".join(init.parent.relative_to(package_root).parts)
             for init in (package_root / "gptcourse").rglob("__init__.py")}
    assert "gptcourse.plots" in found
    assert found <= listed, f"course/pyproject.toml does not ship {sorted(found - listed)}"
