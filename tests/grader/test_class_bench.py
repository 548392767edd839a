"""benchmarks/class_bench.py's parts (benchmarks/classbench/): the class it builds is the one it
plans, and no benchmark patches a private name of the code it measures (--profile once
replaced WorkerPool._handle; it now uses the pool's public reply_observers)."""
import ast
import json

import pytest

from factory import REPO
from gptcourse.checking.tasks import CHAPTERS, TASKS


@pytest.fixture
def classbench(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import classbench.build_class

    return classbench.build_class


def test_the_class_is_built_as_its_plan_says(classbench, tmp_path):
    plan, must_fail = classbench.build_class(tmp_path, 4, seed=1234)
    assert sorted(plan) == [f"student_{k:03d}" for k in range(4)]
    for student, planned in plan.items():
        assert sorted(p.name for p in (tmp_path / student).iterdir()) == sorted(f"{c}.ipynb" for c in CHAPTERS)
        mistaken = {item.split("__")[0] for item in planned["mistakes"]}
        assert {(student, task) for task in mistaken} <= must_fail
        kind, chapter, task = planned["broken"] or (None, None, None)
        if kind in ("truncated", "empty"):
            text = (tmp_path / student / f"{chapter}.ipynb").read_text()
            with pytest.raises(json.JSONDecodeError):
                json.loads(text)
        elif kind == "syntax":
            assert (student, task) in must_fail
    # At 4 students, one of each kind of broken notebook (2 % per kind, at least one).
    assert sorted(p["broken"][0] for p in plan.values() if p["broken"]) == ["empty", "syntax", "truncated"]
    described = classbench.describe_class(plan)
    assert described["students"] == 4 and described["broken_notebooks"] == {"empty": 1, "syntax": 1, "truncated": 1}
    assert classbench.TASKS_PER_STUDENT == len(TASKS)


def private_assignments(source):
    """[(line, target)] where the code assigns to an attribute of another object whose name starts
    with one underscore (x._name = ..., setattr(x, "_name", ...))."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            if (isinstance(target, ast.Attribute) and target.attr.startswith("_") and not target.attr.startswith("__")
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")):
                found.append((node.lineno, ast.unparse(target)))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                and str(node.args[1].value).startswith("_") and not str(node.args[1].value).startswith("__")):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_benchmark_patches_a_private_name():
    found = [f"{path.relative_to(REPO)}:{line}: {target}" for path in sorted((REPO / "benchmarks").rglob("*.py"))
             for line, target in private_assignments(path.read_text(encoding="utf-8"))]
    assert not found, found


def test_the_scan_finds_a_private_name_patched():
    source = "from grader import pool\npool.WorkerPool._handle = lambda *a: None\nsetattr(pool, '_x', 1)\nself._y = 2\n"
    assert private_assignments(source) == [(2, "pool.WorkerPool._handle"), (3, "setattr(pool, '_x', 1)")]


def private_names_of_the_project():
    """Every name with one leading underscore that the course package or the grader defines
    (functions, classes, methods, module-level names)."""
    names = set()
    for root in (REPO / "course" / "gptcourse", REPO / "grader"):
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def private_uses(source, private):
    """[(line, name)] where code reads one of `private`: as an attribute (x._name), an import, or a
    string that names it (a profiler's stats matched on a function's name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in private and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name in private]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in private:
            found.append((node.lineno, node.value))
    return found


def test_benchmarks_use_only_public_names_of_the_course_and_the_grader():
    """A benchmark that reaches for engine._job or matches a profile on '_exec_student_cell' breaks
    when the code is tidied; what benchmarks need is public API."""
    private = private_names_of_the_project()
    found = [f"{path.relative_to(REPO)}:{line}: {name}" for path in sorted((REPO / "benchmarks").rglob("*.py"))
             for line, name in private_uses(path.read_text(encoding="utf-8"), private)]
    assert not found, found


def test_the_scan_finds_private_names_read():
    source = "from m import _hidden\nengine._job(1)\nstats.get('_exec')\nself._mine = 1\nx._other\n"
    assert private_uses(source, {"_hidden", "_job", "_exec", "_mine"}) == [(1, "_hidden"), (2, "_job"), (3, "_exec")]
