"""grader.grading.gradefolder reads run.json and grades.json back for every command (report, export,
push-nbgrader, regrade, gradescope, the next grade run's seed): one reader each, one set of
messages, and no other module opens them with its own rules."""
import ast
import json
import os
import stat

import pytest

from factory import REPO
from grader.grading import gradefolder


def write(folder, name, text):
    (folder / name).write_text(text, encoding="utf-8")


def test_grades_are_a_list_of_task_records(tmp_path):
    write(tmp_path, gradefolder.GRADES_JSON, json.dumps([{"submission": "alice", "task": "2.1"}]))
    assert gradefolder.read_grades(str(tmp_path)) == [{"submission": "alice", "task": "2.1"}]


@pytest.mark.parametrize("text, says", [
    (None, "was never graded; grade first (python -m grader grade PATH... --out"),
    ("{not json", "could not be read"),
    (json.dumps({"alice": 3}), "is not a list of task records"),
    (json.dumps([{"task": "2.1"}, "bob"]), "is not a list of task records"),
])
def test_grades_that_are_missing_or_something_else_say_which_file_and_what_to_do(tmp_path, text, says):
    if text is not None:
        write(tmp_path, gradefolder.GRADES_JSON, text)
    with pytest.raises(gradefolder.GradeFolderError) as raised:
        gradefolder.read_grades(str(tmp_path))
    assert says in str(raised.value) and str(tmp_path / gradefolder.GRADES_JSON) in str(raised.value)


@pytest.mark.parametrize("text", [None, "[1, 2]", "{half"])
def test_a_run_record_is_needed_or_read_as_nothing(tmp_path, text):
    if text is not None:
        write(tmp_path, gradefolder.RUN, text)
    assert gradefolder.read_run(str(tmp_path), required=False) == {}
    with pytest.raises(gradefolder.GradeFolderError, match="run.json"):
        gradefolder.read_run(str(tmp_path))


def test_a_run_record_is_read_as_written(tmp_path):
    write(tmp_path, gradefolder.RUN, json.dumps({"seed": 7, "device": "cpu"}))
    assert gradefolder.read_run(str(tmp_path)) == {"seed": 7, "device": "cpu"}


def functions_that_load_json_beside(name, path):
    """The functions of a module that name gradefolder.<name> and call json.load themselves."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        names_it = any(isinstance(n, ast.Attribute) and n.attr == name for n in ast.walk(node))
        loads = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "load"
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == "json" for n in ast.walk(node))
        if names_it and loads:
            found.append(f"{path.name}: {node.name}")
    return found


def test_the_rule_finds_a_module_that_reads_the_gradebook_itself(tmp_path):
    path = tmp_path / "elsewhere.py"
    path.write_text("def f(d):\n    return json.load(open(os.path.join(d, gradefolder.GRADES_JSON)))\n")
    assert functions_that_load_json_beside("GRADES_JSON", path) == ["elsewhere.py: f"]


@pytest.mark.parametrize("name", ["GRADES_JSON", "RUN"])
def test_no_other_module_reads_run_json_or_grades_json_with_rules_of_its_own(name):
    modules = [path for path in sorted((REPO / "grader").rglob("*.py"))
               if path.name != "gradefolder.py" and "reference" not in path.parts]
    assert len(modules) > 15
    readers = [found for path in modules for found in functions_that_load_json_beside(name, path)]
    assert not readers, f"read {name} through gradefolder.read_grades / read_run instead: {readers}"


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_file_written_atomically_gets_the_mode_the_umask_gives(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        gradefolder.write_atomically(tmp_path / "grades.json", "[]")
        assert gradefolder.current_umask() == umask
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "grades.json").stat().st_mode) == mode
