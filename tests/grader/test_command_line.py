"""One command line for the course: python -m grader build|workshop|grade|report|export|...

Each command lives in its own module (add_parser, main); grader/__main__.py lists them and
imports a module only when its command is named, so a grade run does not pay for nbformat and
nbgrader, which only build and workshop need.
"""
import subprocess
import sys

from factory import REPO
from grader import __main__ as command_line


def run(*code):
    result = subprocess.run([sys.executable, "-c", "\n".join(code)], cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "grader", "--help"], cwd=REPO, capture_output=True, text=True,
                         timeout=120).stdout
    for command in ["grade", "report", *command_line.MODULES]:
        assert f"\n    {command} " in out, command


def test_each_module_named_owns_its_command():
    for command, module in command_line.MODULES.items():
        out = subprocess.run([sys.executable, "-m", "grader", command, "--help"], cwd=REPO, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.startswith(f"usage: python -m grader {command}"), (module, out)


def test_grading_commands_do_not_import_the_build_tools():
    loaded = run("import sys",
                 "from grader.__main__ import main",
                 "assert main(['report', '/nonexistent/grades']) == 1",
                 "print(sorted(m for m in ('nbformat', 'nbgrader', 'grader.authoring.build', 'grader.authoring.workshop') if m in sys.modules))")
    assert loaded.strip() == "[]"


def test_the_older_module_spellings_still_work():
    for module in ("grader.authoring.build", "grader.authoring.workshop"):
        out = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0 and "usage: python -m grader" in out.stdout, out.stderr


def test_the_tools_that_read_a_grade_folder_do_not_import_torch():
    """Exports, the nbgrader and LMS pushes, the reports, the similarity report and the grade folder's own
    module read JSON: they take the manifest from grader.paths and records from grader.grading.gradefolder,
    not from the engine."""
    loaded = run("import sys",
                 "from grader.outputs import class_report, exports, lms, report, similarity",
                 "from grader.grading import gradefolder",
                 "from grader.nbgrading import push",
                 "from grader.paths import load_manifest",
                 "assert load_manifest()",
                 "assert similarity.find_similar({'2.1': {'a': 'x = 1', 'b': 'y = 2'}})['2.1'].pairs == []",
                 "print(sorted(m for m in ('torch', 'grader.grading.engine') if m in sys.modules))")
    assert loaded.strip() == "[]"
