"""The seams between shared code and chapters: one module per chapter on each side, found by
name from the task table; shared code never names a task; a worker carries only what its
task needs; the build tools do not import each other in a cycle."""
import importlib
import json
import re
import subprocess
import sys

import pytest

from factory import REPO, manifest
from gptcourse.checking.probes import META, device_pass_supported
from gptcourse.checking.course import chapters
from gptcourse.checking.tasks import CHAPTERS, TASKS, carried_tasks, chapter_module, chapters_for, get_task, tasks_of

# Shared code: what a new chapter must never have to edit.
GENERIC_FILES = [
    "course/gptcourse/checking/probes.py", "course/gptcourse/checking/judge.py",
    *sorted(str(path.relative_to(REPO)) for path in (REPO / "course/gptcourse/checking/kinds").glob("*.py")),
    "course/gptcourse/checking/selfcheck.py", "course/gptcourse/checking/records.py", "course/gptcourse/checking/tasks.py",
    "course/gptcourse/checking/contract.py", "course/gptcourse/checking/chapters/__init__.py",
    "grader/grading/expectations.py", "grader/chapters/casekit.py", "grader/chapters/__init__.py",
    "grader/grading/engine.py", "grader/grading/verdict.py", "grader/authoring/build.py", "grader/authoring/contract.py",
]
TASK_ID = re.compile(r"""(?<![\w.])["']?\d+\.\d+["']?(?![\w.])""")


@pytest.mark.parametrize("path", GENERIC_FILES)
def test_shared_code_names_no_task(path):
    """No task id in code or strings (docstring examples use placeholders)."""
    text = (REPO / path).read_text()
    found = [m.group(0) for m in TASK_ID.finditer(text) if m.group(0).strip("'\"") in {t.id for t in TASKS}]
    assert not found, f"{path} names tasks {found}: move that to the chapter's own module"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_has_its_public_and_grader_s_module(chapter):
    """Each side of a chapter ends with one SPECS entry per task: the public chapter module's TaskSpec
    (probes, hints) and the grader's chapter module's GraderSpec (cases, known mistakes), for
    exactly the course table's tasks."""
    from gptcourse.checking.chapters import TaskSpec
    from grader.chapters import GraderSpec, chapter_module as graders_module, hidden_cases

    public, graders = chapter_module(chapter), graders_module(chapter)
    ids = {t.id for t in tasks_of(chapter)}
    assert set(public.SPECS) == ids and set(graders.SPECS) == ids
    for task in tasks_of(chapter):
        assert task.chapter == chapter
        task_spec, grader_spec = public.SPECS[task.id], graders.SPECS[task.id]
        assert isinstance(task_spec, TaskSpec) and isinstance(grader_spec, GraderSpec), task.id
        kinds_used = {case.kind for case in hidden_cases(task.id, 1)}
        assert kinds_used and kinds_used <= set(task_spec.probes), task.id
        assert grader_spec.mistakes(), f"task {task.id} has no known mistakes"


def test_no_chapter_module_keeps_a_table_per_fact():
    """What a task is lives in its SPECS entries: the tables keyed by task id that they replaced
    (PROBES and HINTS on the public side, _PUBLIC, _HIDDEN, _MISTAKES and the functions that
    looked a task up in them on the grader's side) must not come back beside them."""
    from grader.chapters import chapter_module as graders_module

    for chapter in CHAPTERS:
        public, graders = chapter_module(chapter), graders_module(chapter)
        assert not {"PROBES", "HINTS"} & set(vars(public)), chapter
        left = {"_PUBLIC", "_HIDDEN", "_MISTAKES", "public_cases", "hidden_cases", "mistakes",
                "expectation_extras", "case_for_device"} & set(vars(graders))
        assert not left, (chapter, left)


def test_no_chapter_lacks_what_it_needs_outside_its_own_files():
    """The tables kept by hand in the tests, a test file, GRADING_DATA, and what follows from the
    master (a GPT-2 branch, a test of each picture): tests/chapter_entries.py names who lacks what."""
    from chapter_entries import missing

    assert missing() == {}


def test_the_course_table_lists_every_task_once_in_course_order():
    assert [t.id for t in TASKS] == [t.id for chapter in CHAPTERS for t in tasks_of(chapter)]
    assert len({t.id for t in TASKS}) == len(TASKS)
    for task in TASKS:  # course order: chapter by chapter, task by task
        assert task.id.split(".")[0] == task.chapter.split("_")[0].lstrip("0")
    with pytest.raises(KeyError, match="unknown chapter"):
        chapter_module("99_nowhere")


def test_masters_have_exactly_the_tasks_of_the_table():
    """The task table and the masters are independent sources: the build checks they agree."""
    built = manifest()
    assert list(built) == list(CHAPTERS)
    for chapter in CHAPTERS:
        assert list(built[chapter]["tasks"]) == [t.id for t in tasks_of(chapter)]


def test_a_task_carries_its_chapter_and_its_needs_not_every_earlier_chapter():
    for task in TASKS:
        carried = carried_tasks(task.id)
        same_chapter_before = [t for t in tasks_of(task.chapter) if TASKS.index(t) < TASKS.index(task)]
        assert set(same_chapter_before) <= set(carried)
        for needed in task.needs:
            assert get_task(needed) in carried
        # Nothing from another chapter unless something carried needs it.
        needed_ids = {n for t in carried + [task] for n in t.needs}
        for other in carried:
            if other.chapter != task.chapter:
                assert other.id in needed_ids, (task.id, other.id)
        assert chapters_for(task.id)[-1] == task.chapter


def test_every_name_a_carried_reference_reads_is_defined_when_the_task_is_graded():
    """The worker runs the setup cells, then the carried reference cells, then the student's
    cell. Carrying chapter 04's GPTModel into chapter 05 once brought GPTModel's cell without
    TransformerBlock's (it needs it at construction): the same-chapter tasks a reference cell
    uses must be in its `needs`, so that a later chapter carries them too."""
    import builtins

    from grader.authoring.build import names_read

    built = manifest()
    for task in TASKS:
        namespace = {"__name__": "__main__"}
        for chapter in chapters_for(task.id):
            for setup in built[chapter]["setup"]:
                exec(setup, namespace)
        sources = [built[t.chapter]["tasks"][t.id]["source"] for t in carried_tasks(task.id)]
        for source in sources:
            exec(source, namespace)
        defined = set(namespace) | set(dir(builtins))
        for carried, source in zip(carried_tasks(task.id), sources):
            missing = names_read(source) - defined
            assert not missing, f"task {task.id} carries {carried.id}, whose cell reads {sorted(missing)}"


def test_the_worker_job_holds_only_the_carried_reference_sources():
    from grader.grading.engine import Settings, worker_job

    built = manifest()
    for task in TASKS:
        job = worker_job(task.id, "pass\n", built, [], Settings(out_dir="unused"))
        carried = carried_tasks(task.id)
        assert job["reference_sources"] == [built[t.chapter]["tasks"][t.id]["source"] for t in carried]
        assert job["earlier_names"] == [n for t in carried for n in t.carried_names]
        assert job["setup_sources"] == [s for c in chapters_for(task.id) for s in built[c]["setup"]]
        assert built[task.chapter]["tasks"][task.id]["source"] not in job["reference_sources"]


def test_module_cases_get_a_device_pass_in_the_grader():
    from grader.grading.engine import Expectations

    for task in TASKS:
        cases = Expectations(5, ["cpu"]).cases(task.id)
        for index, case in enumerate(cases):
            if case.device == "cpu" and device_pass_supported(case):
                assert cases[index + 1].device == META and cases[index + 1].label == case.label


def test_the_reference_passes_every_device_pass_and_records_nothing():
    """The grader expects {} of a meta case without running the reference there: check that
    this is what the reference gives, on every hidden case of every task."""
    from grader.grading.engine import Expectations
    from grader.grading.expectations import seeded_probe
    from grader.reference import reference_objects

    for task in TASKS:
        for case in Expectations(5, ["cpu"]).cases(task.id):
            if case.device == META:
                assert seeded_probe(reference_objects(task.id), case) == {}, (task.id, case.label)


def test_build_and_nbgrader_course_import_without_a_cycle():
    code = ("import sys, grader.nbgrading.course; "
            "assert 'grader.authoring.build' not in sys.modules, 'nbgrader_course imports build'; "
            "import grader.authoring.build")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def grader_imports():
    """{grader module: the grader modules it imports, at the top or inside a function}."""
    import ast

    modules = {}
    for path in sorted((REPO / "grader").rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        modules[name] = found
    return {name: {other for other in found if other in modules and other != name} for name, found in modules.items()}


def test_the_grader_s_modules_import_each_other_without_a_cycle():
    imports = grader_imports()

    def in_a_cycle(name):
        """Whether following imports from `name` leads back to it."""
        seen, todo = set(), list(imports[name])
        while todo:
            step = todo.pop()
            if step == name:
                return True
            if step not in seen:
                seen.add(step)
                todo.extend(imports[step])
        return False

    cycles = sorted(name for name in imports if in_a_cycle(name))
    assert not cycles, f"these grader modules are in an import cycle: {cycles}"


def test_reference_package_and_grader_s_chapter_modules_are_found_by_name():
    from grader.reference import reference_earlier, reference_objects

    for task in TASKS:
        assert set(reference_objects(task.id)) == set(task.names)
        assert set(reference_earlier(task.id)) == {n for t in carried_tasks(task.id) for n in t.carried_names}
        importlib.import_module(f"grader.chapters.ch{task.chapter}")


def test_the_readme_chapter_table_is_the_course_table():
    """The build writes the README's chapter table from the course table (a new chapter gets its
    row from `make release`); the committed README must be what it writes."""
    from grader.authoring.build import readme_row, with_chapter_table

    text = (REPO / "README.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "(course/" in line and ".ipynb)" in line]
    assert rows == [readme_row(chapter) for chapter in chapters()]
    assert with_chapter_table(text) == text, "README.md's chapter table is stale: run `make release`"


def test_the_readme_chapter_table_gets_a_new_chapter_s_row_and_loses_a_removed_one():
    from grader.authoring.build import readme_row, with_chapter_table

    first, *others = chapters()
    text = (REPO / "README.md").read_text()
    without_first = text.replace(readme_row(first) + "\n", "")
    assert without_first != text and with_chapter_table(without_first) == text
    extra = readme_row(first).replace(first.title, "A chapter the table does not have")
    with_extra = text.replace(readme_row(others[0]), readme_row(others[0]) + "\n" + extra)
    assert with_extra != text and with_chapter_table(with_extra) == text


@pytest.mark.parametrize("chapter", chapters(), ids=lambda c: c.name)
def test_each_notebook_opens_with_its_heading_in_the_course_table(chapter):
    for folder in ("solutions", "course"):
        notebook = json.loads((REPO / folder / f"{chapter.name}.ipynb").read_text())
        first_line = "".join(notebook["cells"][0]["source"]).strip().splitlines()[0]
        assert first_line == f"# {chapter.heading}", folder
