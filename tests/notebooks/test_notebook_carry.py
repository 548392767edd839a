"""Carrying a student's own code from an earlier chapter's notebook (gptcourse.carry)."""
import copy
import json
import os

import pytest
import torch

from factory import (CAUSAL_ATTENTION_REUSING_2_4, REPO, filled_notebook, grade_id, one_line, release_notebook,
                     write_notebook)
from gptcourse.carry import carry_over, check_pasted, setup_and_carried_names
from gptcourse.messages import SHOWN_WIDTH

CH2 = "02_attention"


def cell(nb, wanted):
    return next(c for c in nb["cells"] if grade_id(c) == wanted)


def with_cells(nb, **sources):
    """A copy of `nb` with the cells of the given grade_ids replaced (task_2_5=...)."""
    nb = copy.deepcopy(nb)
    for wanted, source in sources.items():
        cell(nb, wanted)["source"] = source
    return nb


def test_brings_a_solved_class_and_says_its_check_passed(tmp_path, capsys):
    write_notebook(filled_notebook(CH2), tmp_path / f"{CH2}.ipynb")

    found = carry_over("2.5", folder=tmp_path)

    assert one_line(capsys.readouterr().out) == f"Brought CausalAttention from {CH2}.ipynb; its self-check passed."
    module = found["CausalAttention"](d_in=3, d_out=2, context_length=4, dropout=0.0)
    assert module(torch.rand(2, 4, 3)).shape == (2, 4, 2)


def test_runs_the_master_beside_the_chapter_03_master(capsys):
    found = carry_over("2.5", folder=REPO / "solutions")
    assert "its self-check passed" in capsys.readouterr().out
    assert set(found) == {"CausalAttention"}


def test_looks_in_the_current_directory_by_default(tmp_path, monkeypatch, capsys):
    write_notebook(filled_notebook(CH2), tmp_path / f"{CH2}.ipynb")
    monkeypatch.chdir(tmp_path)
    assert set(carry_over("2.5")) == {"CausalAttention"}


def test_an_unfinished_class_comes_with_its_failed_check(tmp_path, capsys):
    write_notebook(release_notebook(CH2), tmp_path / f"{CH2}.ipynb")

    found = carry_over("2.5", folder=tmp_path)

    said = capsys.readouterr().out
    line = one_line(said)
    assert line.startswith(f"Brought CausalAttention from {CH2}.ipynb; its self-check FAILED: Task 2.5")
    assert "not implemented yet" in line and "may fail because of it" in line
    # One message, whatever the check's message: no blank line in it, and broken between words
    # into lines the page shows whole.
    assert "\n\n" not in said and max(len(shown) for shown in said.splitlines()) <= SHOWN_WIDTH, said
    with pytest.raises(NotImplementedError):
        found["CausalAttention"](3, 2, 4, 0.0)


def test_without_the_notebook_it_asks_to_paste(tmp_path, capsys):
    assert carry_over("2.5", folder=tmp_path) == {}
    assert one_line(capsys.readouterr().out) == (f"No {CH2}.ipynb in this folder: paste your CausalAttention from it "
                                                 "into the next cell and run that cell.")


def test_runs_only_setup_and_task_cells_and_keeps_their_output_quiet(tmp_path, capsys):
    nb = filled_notebook(CH2)
    for c in nb["cells"]:  # every demo and plot would fail if it ran
        if "demo" in c["metadata"].get("tags", []) or "plot" in c["metadata"].get("tags", []):
            c["source"] = "raise RuntimeError('a demo ran')"
    source = cell(nb, "task_2_5")["source"]
    nb = with_cells(nb, task_2_5="print('noise from the task cell')\n" + source)
    write_notebook(nb, tmp_path / f"{CH2}.ipynb")

    assert set(carry_over("2.5", folder=tmp_path)) == {"CausalAttention"}
    assert capsys.readouterr().out == f"Brought CausalAttention from {CH2}.ipynb; its self-check passed.\n"


def test_earlier_task_cells_run_too_so_a_class_may_use_them(tmp_path, capsys):
    reuse = CAUSAL_ATTENTION_REUSING_2_4
    write_notebook(with_cells(filled_notebook(CH2), task_2_5=reuse), tmp_path / f"{CH2}.ipynb")
    carry_over("2.5", folder=tmp_path)
    assert "its self-check passed" in capsys.readouterr().out


@pytest.mark.parametrize("broken, expected", [
    ("class CausalAttention(nn.Module:\n    pass", "its Task 2.5 cell raised SyntaxError at line 1"),
    ("x = 1\nraise ValueError('oops')", "its Task 2.5 cell raised ValueError at line 2: oops"),
    ("pass", "it does not define CausalAttention"),
])
def test_a_broken_notebook_is_reported_in_one_line(tmp_path, capsys, broken, expected):
    write_notebook(with_cells(filled_notebook(CH2), task_2_5=broken), tmp_path / f"{CH2}.ipynb")

    assert carry_over("2.5", folder=tmp_path) == {}

    said = capsys.readouterr().out
    line = one_line(said)
    assert line.startswith(f"Could not bring CausalAttention from {CH2}.ipynb: {expected}"), line
    assert "paste CausalAttention into the next cell" in line and "\n\n" not in said


def test_check_pasted_checks_what_was_pasted(capsys):
    namespace = {}
    exec("import torch\nimport torch.nn as nn\n" + json.loads(
        (REPO / "grader" / "reference" / "manifest.json").read_text())[CH2]["tasks"]["2.5"]["source"], namespace)

    check_pasted("2.5", namespace)

    assert one_line(capsys.readouterr().out) == "Pasted CausalAttention; its self-check passed."


def test_check_pasted_with_nothing_pasted(capsys):
    check_pasted("2.5", {})
    assert capsys.readouterr().out.startswith("Nothing pasted: paste your CausalAttention (Task 2.5)")


def test_check_pasted_after_a_successful_carry_over(tmp_path, capsys):
    write_notebook(filled_notebook(CH2), tmp_path / f"{CH2}.ipynb")
    namespace = dict(carry_over("2.5", folder=tmp_path))
    capsys.readouterr()

    check_pasted("2.5", namespace)

    assert one_line(capsys.readouterr().out) == (f"CausalAttention came from {CH2}.ipynb (the cell above): "
                                                 "nothing to paste here.")


def test_the_reference_package_imports_carried_names_from_the_earlier_chapter():
    """The carry cell looks for notebooks; the generated reference module must not."""
    from grader.reference import ch02_attention, ch03_multihead_attention

    assert ch03_multihead_attention.CausalAttention is ch02_attention.CausalAttention
    text = (REPO / "grader" / "reference" / "ch03_multihead_attention.py").read_text()
    assert "carry_over" not in text


def test_the_chapter_03_master_carries_with_a_locked_cell_and_a_paste_cell():
    master = json.loads((REPO / "solutions" / "03_multihead_attention.ipynb").read_text())
    cells = master["cells"]
    index = next(i for i, c in enumerate(cells) if grade_id(c) == "carry_2_5")
    carry, paste = cells[index], cells[index + 1]
    assert carry["metadata"]["nbgrader"]["locked"] and not carry["metadata"]["nbgrader"]["solution"]
    assert 'carry_over("2.5")' in "".join(carry["source"])
    assert "nbgrader" not in paste["metadata"] and 'check_pasted("2.5", globals())' in "".join(paste["source"])


def test_carries_through_a_chain_of_notebooks_in_their_own_folder(tmp_path, monkeypatch, capsys):
    """A chapter 03 notebook brings CausalAttention with its own carry-over cell, from beside
    itself: carrying Task 3.1 into a later chapter needs no chapter 02 code here."""
    ch3 = "03_multihead_attention"
    released_carry_cell = cell(release_notebook(ch3), "carry_2_5")["source"]  # calls carry_over("2.5")
    write_notebook(filled_notebook(CH2), tmp_path / "course" / f"{CH2}.ipynb")
    write_notebook(with_cells(filled_notebook(ch3), carry_2_5=released_carry_cell), tmp_path / "course" / f"{ch3}.ipynb")
    monkeypatch.chdir(tmp_path)  # not where the notebooks are

    found = carry_over("3.1", folder=tmp_path / "course")

    assert one_line(capsys.readouterr().out) == ("Brought MultiHeadAttentionWrapper from 03_multihead_attention.ipynb; "
                                                 "its self-check passed.")
    wrapper = found["MultiHeadAttentionWrapper"](d_in=3, d_out=2, context_length=4, dropout=0.0, num_heads=2)
    assert wrapper(torch.rand(1, 4, 3)).shape == (1, 4, 4)


def test_a_saved_notebook_s_setup_and_carried_names_with_what_its_carry_over_cells_said(tmp_path, capsys):
    """setup_and_carried_names (what gptcourse.ddp_pretrain reads a chapter 05 notebook with):
    the setup, carry-over and paste cells run, the task cells do not, and nothing is printed."""
    ch3 = "03_multihead_attention"
    write_notebook(filled_notebook(CH2), tmp_path / f"{CH2}.ipynb")
    path = write_notebook(with_cells(filled_notebook(ch3), carry_2_5=cell(release_notebook(ch3), "carry_2_5")["source"]),
                          tmp_path / f"{ch3}.ipynb")

    namespace, printed = setup_and_carried_names(str(path))

    assert printed == (f"Brought CausalAttention from {CH2}.ipynb; its self-check passed.\n"
                       f"CausalAttention came from {CH2}.ipynb (the cell above): nothing to paste here.\n")
    assert capsys.readouterr().out == ""
    assert "CausalAttention" in namespace and "torch" in namespace  # carried, and the setup cell's imports
    assert "MultiHeadAttentionWrapper" not in namespace  # Task 3.1's cell did not run


def test_under_nbgrader_both_cells_bind_the_reference(tmp_path, monkeypatch, capsys):
    # nbgrader restores the locked carry-over cell and runs a submission alone in its folder:
    # a task cell that subclasses the carried class (6.5's KVCacheMultiHeadAttention from 3.2's
    # MultiHeadAttention) then failed to define itself under nbgrader, while the course grader,
    # which binds the reference, gave full points.
    from grader.reference import reference_object

    # A copy of the environment, which nbgrader's configuration below may change.
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k != "GPTCOURSE_REFERENCE_MODULE"})
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    config = (REPO / "grader" / "nbgrading" / "nbgrader_config.py").read_text()
    exec(config, {"get_config": lambda: type("Config", (), {"__getattr__": lambda self, name: self})()})
    assert os.environ["GPTCOURSE_REFERENCE_MODULE"] == "grader.reference"  # the course's config sets it
    brought = carry_over("3.2", folder=str(tmp_path))  # no notebook there
    assert brought == {"MultiHeadAttention": reference_object("3.2")}
    assert "reference versions" in one_line(capsys.readouterr().out)

    class Pasted:  # what the student pasted on Colab: not what the grader grades with
        pass

    namespace = {"MultiHeadAttention": Pasted}
    check_pasted("3.2", namespace)
    assert namespace["MultiHeadAttention"] is reference_object("3.2")


@pytest.mark.parametrize("graded", ["", "autograde"])
def test_outside_nbgrader_or_without_its_config_the_reference_is_never_used(tmp_path, monkeypatch, capsys, graded):
    monkeypatch.setenv("NBGRADER_EXECUTION", graded)
    monkeypatch.setenv("GPTCOURSE_REFERENCE_MODULE", "" if graded else "grader.reference")
    assert carry_over("3.2", folder=str(tmp_path)) == {}
    assert "paste your MultiHeadAttention" in one_line(capsys.readouterr().out)


def _pasted_cases():
    from factory import manifest
    from gptcourse.checking.tasks import CHAPTERS

    found = []
    for chapter in CHAPTERS:
        for cell in release_notebook(chapter)["cells"]:
            if grade_id(cell).startswith("carry_"):
                task_id = grade_id(cell)[len("carry_"):].replace("_", ".")
                found.append((chapter, task_id))
    return manifest(), found


@pytest.mark.parametrize("chapter_and_task", _pasted_cases()[1], ids=lambda ct: f"{ct[0]}-{ct[1]}")
def test_earlier_code_pasted_on_colab_runs_with_the_setup_cell(chapter_and_task, capsys):
    # On Colab a student pastes an earlier task's code (with the classes it uses) under the
    # chapter's setup cell alone: chapters 05 and 06 lacked `math` and `Dataset`, so a pasted
    # GPTModel or create_dataloader_v1 failed its check with a NameError.
    from gptcourse.checking.tasks import carried_tasks, get_task

    chapter, task_id = chapter_and_task
    m = _pasted_cases()[0]
    namespace = {"__name__": "__main__"}
    for setup in m[chapter]["setup"]:
        exec(setup, namespace)
    needed = [t.id for t in carried_tasks(task_id)] + [task_id]
    sources = {tid: t["source"] for chapter_manifest in m.values() for tid, t in chapter_manifest["tasks"].items()}
    exec("\n\n".join(sources[t] for t in needed), namespace)
    check_pasted(task_id, namespace)
    out = capsys.readouterr().out
    assert "its self-check passed" in out, out
    assert all(name in namespace for name in get_task(task_id).names)
