"""Colab: one source for the repository address, a badge per notebook, a helpful failed install."""
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from factory import REPO, grade_id
from gptcourse import links
from gptcourse.checking.tasks import CHAPTERS

NOTEBOOKS = [REPO / folder / f"{chapter}.ipynb" for folder in ("solutions", "course") for chapter in CHAPTERS]


def cells(path):
    return json.loads(path.read_text())["cells"]


def source(cell):
    return "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_colab_cell_and_badge_agree_with_the_one_source(path):
    nb = cells(path)
    chapter = path.stem
    colab = [c for c in nb if grade_id(c) == "colab"]
    assert len(colab) == 1 and colab[0] is next(c for c in nb if c["cell_type"] == "code")
    assert source(colab[0]) == links.colab_cell_source()
    title = next(c for c in nb if c["cell_type"] == "markdown")
    assert links.colab_badge(chapter) in source(title)
    assert links.colab_url(chapter).endswith(f"/{links.PACKAGE_FOLDER}/{chapter}.ipynb")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_address_appears_nowhere_else_in_a_notebook(path):
    """Only in the Colab cell, the badge and links to documentation pages (all written by
    links.update_notebook, which rewrites them when the course moves)."""
    host = links.REPOSITORY.removeprefix("https://")
    title = next(c for c in cells(path) if c["cell_type"] == "markdown")
    for cell in cells(path):
        if cell is title or grade_id(cell) == "colab":
            continue
        text = re.sub(re.escape(links.docs_url("")) + r"[\w-]+\.md", "", source(cell))
        assert host not in text, source(cell)[:200]


def test_the_package_names_the_address_only_in_links():
    host = links.REPOSITORY.removeprefix("https://")
    holders = [p.name for p in (REPO / "course" / "gptcourse").rglob("*.py") if host in p.read_text()]
    assert holders == ["links.py"]


def test_update_notebook_leaves_an_up_to_date_master_unchanged(tmp_path):
    copy = shutil.copy(REPO / "solutions" / f"{CHAPTERS[0]}.ipynb", tmp_path)
    assert links.update_notebook(copy) is False


def test_update_notebook_follows_a_new_address(tmp_path, monkeypatch):
    copy = shutil.copy(REPO / "solutions" / f"{CHAPTERS[0]}.ipynb", tmp_path)
    monkeypatch.setattr(links, "REPOSITORY", "https://github.com/someone-else/llm-course")

    assert links.update_notebook(copy) is True

    text = source(cells(tmp_path / f"{CHAPTERS[0]}.ipynb")[0])
    assert text.count("colab-badge.svg") == 1 and "someone-else/llm-course/blob/main/course/" in text
    colab = next(c for c in cells(tmp_path / f"{CHAPTERS[0]}.ipynb") if grade_id(c) == "colab")
    assert "git+https://github.com/someone-else/llm-course.git@main#subdirectory=course" in source(colab)
    assert links.update_notebook(copy) is False  # a second run changes nothing


def run_colab_cell(found, pip_returncode=0):
    """Run the Colab cell with the package present or not, and pip stubbed out."""
    real_find_spec = importlib.util.find_spec
    module_spec = object() if found else None
    pip = subprocess.CompletedProcess(args=[], returncode=pip_returncode)
    with mock.patch("importlib.util.find_spec",
                    side_effect=lambda name, *a: module_spec if name == "gptcourse" else real_find_spec(name, *a)), \
            mock.patch("subprocess.run", return_value=pip) as run:
        exec(links.colab_cell_source(), {})
    return run


def test_colab_cell_does_nothing_when_the_package_is_there(capsys):
    assert not run_colab_cell(found=True).called
    assert capsys.readouterr().out == "gptcourse is already installed: nothing to do.\n"


def test_colab_cell_installs_from_the_one_address(capsys):
    run = run_colab_cell(found=False)
    assert run.call_args.args[0][-1] == links.pip_requirement()
    assert capsys.readouterr().out.endswith("gptcourse installed.\n")


def test_a_failed_install_says_what_to_do(capsys):
    with pytest.raises(RuntimeError, match="follow the steps printed above"):
        run_colab_cell(found=False, pip_returncode=1)
    advice = capsys.readouterr().out
    assert "internet connection" in advice and "Runtime" in advice
    assert f'!pip install "{links.pip_requirement()}"' in advice  # the exact command to run by hand
    assert links.issues_url() in advice  # where to report
    assert re.search(r"failed", advice)


def test_the_install_cell_takes_its_address_from_the_environment_variable(monkeypatch, capsys):
    """An instructor (or a test) points the cell at a wheel or a git address of their own."""
    wheel = "file:///srv/course/dist/gptcourse-0.1.0-py3-none-any.whl"
    monkeypatch.setenv(links.INSTALL_ENV_VAR, wheel)
    run = run_colab_cell(found=False)
    assert run.call_args.args[0][-1] == wheel
    assert f"installing it from {wheel}" in capsys.readouterr().out


def test_an_empty_install_variable_means_the_repository(monkeypatch):
    monkeypatch.setenv(links.INSTALL_ENV_VAR, "")
    assert run_colab_cell(found=False).call_args.args[0][-1] == links.pip_requirement()


def test_the_install_variable_changes_nothing_where_the_package_is_there(monkeypatch):
    monkeypatch.setenv(links.INSTALL_ENV_VAR, "file:///nowhere/gptcourse.whl")
    assert not run_colab_cell(found=True).called


def test_repository_option_writes_the_address_into_links_and_the_notebooks(tmp_path):
    """`python -m gptcourse.links --repository URL --branch B notebooks`: the one command an
    instructor runs to move the course (on a copy of links.py, which needs only the standard library)."""
    the_course_links = (REPO / "course" / "gptcourse" / "links.py").read_text()
    script = Path(shutil.copy(REPO / "course" / "gptcourse" / "links.py", tmp_path))
    notebook = shutil.copy(REPO / "solutions" / f"{CHAPTERS[0]}.ipynb", tmp_path)
    fork = "https://github.com/a-teacher/gpt-course"

    result = subprocess.run([sys.executable, str(script), "--repository", fork + ".git/", "--branch", "spring",
                             str(notebook)], capture_output=True, text=True, check=True)

    assert f'REPOSITORY = "{fork}"\nBRANCH = "spring"\n' in script.read_text()
    assert "updated" in result.stdout and "warning" not in result.stdout
    colab = next(c for c in cells(tmp_path / f"{CHAPTERS[0]}.ipynb") if grade_id(c) == "colab")
    assert f"gptcourse @ git+{fork}.git@spring#subdirectory=course" in source(colab)
    rerun = subprocess.run([sys.executable, str(script), str(notebook)], capture_output=True, text=True, check=True)
    assert rerun.stdout.startswith("unchanged")  # the address now lives in the file
    assert (REPO / "course" / "gptcourse" / "links.py").read_text() == the_course_links  # only the copy moved


def test_an_address_off_github_gets_a_warning(tmp_path):
    script = shutil.copy(REPO / "course" / "gptcourse" / "links.py", tmp_path)
    result = subprocess.run([sys.executable, str(script), "--repository", "https://gitlab.com/a/b"],
                            capture_output=True, text=True, check=True)
    assert "warning: https://gitlab.com/a/b is not on github.com" in result.stdout


def test_the_badge_reads_as_a_sentence_where_its_image_cannot_load():
    """Offline (a workshop room, a hub without internet) the page shows the badge's alt text in place
    of Colab's image: it says what the link does, in words."""
    badge = links.colab_badge(CHAPTERS[0])
    assert badge.startswith(f"[![{links.BADGE_TEXT}](") and links.BADGE_TEXT == "Open this chapter in Google Colab"
    first = json.loads((REPO / "course" / f"{CHAPTERS[0]}.ipynb").read_text())["cells"][0]
    assert f"[![{links.BADGE_TEXT}]" in "".join(first["source"])


def test_update_notebook_moves_the_links_to_documentation_pages(tmp_path, monkeypatch):
    nb = cells(NOTEBOOKS[0])
    path = tmp_path / NOTEBOOKS[0].name
    whole = json.loads(NOTEBOOKS[0].read_text())
    whole["cells"].append({"cell_type": "markdown", "id": "md-doc-link", "metadata": {},
                           "source": ["See [the notes](https://github.com/someone/old/blob/dev/docs/benchmarks.md)."]})
    path.write_text(json.dumps(whole, sort_keys=True, indent=1, ensure_ascii=False))
    assert links.update_notebook(path)
    moved = json.loads(path.read_text())["cells"][-1]["source"]
    assert "".join(moved) == f"See [the notes]({links.docs_url('benchmarks.md')})."
    assert len(nb) == len(json.loads(path.read_text())["cells"]) - 1
