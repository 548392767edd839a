"""Colab, as a student meets it: a released notebook of the published course, alone in its
folder (no earlier notebook beside it), in a fresh runtime that has what Colab has (torch,
numpy, pandas, matplotlib, ...) but not gptcourse.
The first cell must install the package, from GPTCOURSE_INSTALL_FROM when it is set and from
the course's repository when not, and the notebook must then run with its tasks unsolved,
every failing cell saying in one line what to finish. The runtime, the fork and the wheel are
local stand-ins (tests/published.py)."""
import shutil
from importlib import metadata

import nbformat
import pytest

from factory import grade_id, manifest, one_line
from gptcourse import links
from gptcourse.checking.tasks import get_task, tasks_of
from published import code_blocks
from test_notebook_errors import check_failure_shows_only_its_message, errors, needs_task_message, printed

pytestmark = pytest.mark.slow


def released(published, chapter, folder):
    """The pushed course's student notebook, alone in `folder` (as in Colab's /content)."""
    folder.mkdir()
    shutil.copy(published.clone / "course" / f"{chapter}.ipynb", folder)
    return nbformat.read(folder / f"{chapter}.ipynb", as_version=4)


def cell(nb, wanted):
    return next(c for c in nb.cells if grade_id(c) == wanted or wanted in c.metadata.get("tags", []))


def without_the_package(colab):
    colab.pip("uninstall", "--yes", "gptcourse")
    assert colab.run_python("import importlib.util; print(importlib.util.find_spec('gptcourse'))") == "None\n"


def check_that_failures_name_the_task_to_finish(nb, chapter):
    """Every error is a check cell's own message or a demo's one line naming a task of this
    chapter or of the one it carries from. Returns the tasks the demos named."""
    found, checks = set(), 0
    for failing, text in errors(nb):
        if grade_id(failing).startswith("check_"):
            check_failure_shows_only_its_message(text)
            assert "not implemented yet" in " ".join(text.split())  # broken between words for the page
            checks += 1
        else:
            assert needs_task_message(text), f"{failing.source[:200]}\n---\n{text}"
            found.add(needs_task_message(text))
    assert checks == len(tasks_of(chapter))
    return found


def test_the_install_cell_installs_the_wheel_named_by_the_variable(colab, published, mirror_dir, tmp_path):
    """Chapter 01, with the doc's `%env GPTCOURSE_INSTALL_FROM=...` cell above the install cell,
    pointing at the wheel that `make dist` built."""
    without_the_package(colab)
    chapter = "01_text_data"
    nb = released(published, chapter, tmp_path / "content")
    env_line = next(code for language, code in code_blocks() if code.startswith("%env ")).strip()
    variable = env_line.removeprefix("%env ").split("=")[0]
    wheel = f"file://{published.wheel()}"
    install_cell = nb.cells.index(cell(nb, "colab"))
    nb.cells.insert(install_cell, nbformat.v4.new_code_cell(f"%env {variable}={wheel}"))

    colab.run_notebook(nb, tmp_path / "content", mirror_dir)

    assert variable == links.INSTALL_ENV_VAR
    said = printed(cell(nb, "colab"))
    assert f"gptcourse not found: installing it from {wheel} " in said and said.endswith("gptcourse installed.\n")
    assert colab.installed_from()["url"] == wheel
    # The package accepts the runtime's torch: pip did not replace it.
    assert colab.run_python("import torch; print(torch.__version__)").strip() == metadata.version("torch")
    assert not [c for c, _ in errors(nb) if grade_id(c) in ("colab", "setup")]
    named = check_that_failures_name_the_task_to_finish(nb, chapter)
    assert "1.1" in named and named <= {task.id for task in tasks_of(chapter)}


def test_without_the_variable_it_installs_from_the_pushed_fork_and_asks_for_a_paste(
        colab, published, mirror_dir, tmp_path):
    """Chapter 03 alone: the install cell takes the fork's git address (the one the instructor
    set), and the carry-over cell, finding no 02_attention.ipynb, falls back to the paste cell."""
    without_the_package(colab)
    chapter = "03_multihead_attention"
    nb = colab.run_notebook(released(published, chapter, tmp_path / "content"), tmp_path / "content", mirror_dir)

    requirement = f"gptcourse @ git+{published.fork}.git@main#subdirectory=course"
    said = printed(cell(nb, "colab"))
    assert f"installing it from {requirement} " in said and said.endswith("gptcourse installed.\n")
    source = colab.installed_from()
    assert source["url"] == f"{published.fork}.git" and source["subdirectory"] == "course"
    assert source["vcs_info"]["commit_id"] == published.pushed_commit()
    assert one_line(printed(cell(nb, "carry_2_5"))).startswith(
        "No 02_attention.ipynb in this folder: paste your CausalAttention from it into the next cell")
    assert one_line(printed(cell(nb, "paste"))).startswith("Nothing pasted: paste your CausalAttention (Task 2.5)")
    named = check_that_failures_name_the_task_to_finish(nb, chapter)
    assert "2.5" in named  # the demos that need the earlier class say so
    first_demo = next(text for c, text in errors(nb) if c.source.startswith("torch.manual_seed(123)\nhead = "))
    assert one_line(first_demo).startswith("This cell needs Task 2.5 (CausalAttention) from chapter 02")


def test_a_pasted_class_is_checked_and_used(colab, published, mirror_dir, tmp_path):
    """The same notebook after the student pasted a correct CausalAttention into the paste cell."""
    chapter = "03_multihead_attention"
    nb = released(published, chapter, tmp_path / "content")
    paste = cell(nb, "paste")
    kept = [line for line in paste.source.splitlines() if not line.startswith("#")]
    reference = manifest()[get_task("2.5").chapter]["tasks"]["2.5"]["source"]
    paste.source = reference + "\n" + "\n".join(kept)

    colab.run_notebook(nb, tmp_path / "content", mirror_dir)

    assert not [c for c, _ in errors(nb) if grade_id(c) in ("colab", "setup")]
    assert one_line(printed(paste)) == "Pasted CausalAttention; its self-check passed."
    named = check_that_failures_name_the_task_to_finish(nb, chapter)
    assert "2.5" not in named and named <= {"3.1", "3.2"}
    head_demo = next(c for c in nb.cells if c.source.startswith("torch.manual_seed(123)\nhead = "))
    assert "CausalAttention output" in printed(head_demo)

