"""The workshop edition: a collapsed answer after every task, used only when chosen; it runs top
to bottom as it is, and with every answer chosen."""
import copy
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from factory import CORPUS, REPO, grade_id, manifest
from gptcourse.checking.tasks import CHAPTERS, tasks_of
from grader.authoring import workshop

CH2 = "02_attention"


def released_files():
    return {chapter: (REPO / "course" / f"{chapter}.ipynb").read_bytes() for chapter in CHAPTERS}


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("workshop")
    before = released_files()
    result = subprocess.run([sys.executable, "-m", "grader", "workshop", "--out", str(out)],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert released_files() == before  # the graded release is unchanged
    return out


def answers_after(nb, wanted):
    """The cell right after the cell with grade_id `wanted`."""
    index = next(i for i, c in enumerate(nb.cells) if grade_id(c) == wanted)
    return nb.cells[index + 1]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_task_cell_is_followed_by_its_collapsed_answer(edition, chapter):
    nb = nbformat.read(edition / f"{chapter}.ipynb", as_version=4)
    nbformat.validate(nb)
    solutions = manifest()[chapter]["tasks"]
    for task in tasks_of(chapter):
        answer = answers_after(nb, task.solution_cell_id)
        assert answer.cell_type == "code" and answer.metadata["jupyter"]["source_hidden"] is True
        first, _, code = answer.source.partition("\n")
        assert first == f"# Answer to Task {task.id} — try it yourself first"
        assert workshop.answer_code(answer.source).strip() == solutions[task.id]["source"].strip()
        assert "\nuse_answer = False\nif use_answer:\n" in answer.source  # nothing happens until chosen
        assert "### BEGIN SOLUTION" not in answer.source and "nbgrader" not in answer.metadata
    released = nbformat.read(REPO / "course" / f"{chapter}.ipynb", as_version=4)
    assert [c for c in nb.cells if "answer" not in c.metadata.get("tags", [])] == released.cells


def test_the_carried_task_gets_its_answer_after_the_paste_cell(edition):
    nb = nbformat.read(edition / "03_multihead_attention.ipynb", as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if grade_id(c) == "carry_2_5")
    assert "paste" in nb.cells[index + 1].metadata["tags"]
    answer = nb.cells[index + 2]
    assert answer.source.startswith("# Answer to Task 2.5 (chapter 02)")
    assert "class CausalAttention(nn.Module):" in answer.source


def test_a_carried_answer_brings_everything_the_carried_code_uses(edition):
    """Chapter 05 carries GPTModel: its answer must define the chapter 04 classes GPTModel
    builds on and chapter 03's MultiHeadAttention too (the answer alone used to stop at
    GPTModel(cfg) with "needs Task 4.4")."""
    nb = nbformat.read(edition / "05_pretraining.ipynb", as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if grade_id(c) == "carry_4_5")
    answer = nb.cells[index + 2].source
    assert answer.startswith("# Answer to Task 4.5 (chapter 04)")
    for name in ("MultiHeadAttention", "LayerNorm", "GELU", "FeedForward", "TransformerBlock", "GPTModel"):
        assert f"class {name}(nn.Module):" in answer, name


def test_writing_into_the_release_folder_is_refused():
    with pytest.raises(ValueError, match="release or the masters"):
        workshop.write_workshop(REPO / "course")


def choose_answers(nb):
    """What a participant does to use every answer: set use_answer = True in each answer cell."""
    for cell in nb.cells:
        if "answer" in cell.metadata.get("tags", []):
            assert "\nuse_answer = False\n" in cell.source
            cell.source = cell.source.replace("\nuse_answer = False\n", "\nuse_answer = True\n")
    return nb


def kernel_env(monkeypatch, mirror_dir):
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", str(REPO / "course"))  # the student package only


def test_running_in_order_checks_the_participants_own_code(edition, mirror_dir, monkeypatch):
    """The answer cell sits between a task cell and its check: it used to redefine the
    participant's function before the check ran, so wrong code (softmax over dim=0) showed "all
    self-check cases passed". Run in order with the answers left alone, the check now sees the
    participant's own code and names the mistake; a participant who chooses the answer then gets
    a passing check."""
    kernel_env(monkeypatch, mirror_dir)
    nb = nbformat.read(edition / f"{CH2}.ipynb", as_version=4)
    end = next(i for i, c in enumerate(nb.cells) if grade_id(c) == "check_2_1")
    nb.cells = nb.cells[:end + 1]  # the setup, Task 2.1, its answer and its check, in order
    task = next(c for c in nb.cells if grade_id(c) == "task_2_1")
    task.source = (CORPUS / "2.1" / "wrong_softmax_dim0.py").read_text()
    chosen = copy.deepcopy(nb)
    run_in_order(nb, edition)
    said = check_output(nb.cells[-1])
    assert "the softmax is taken over the wrong dimension" in said, said
    assert "passed" not in said, said
    run_in_order(choose_answers(chosen), edition)
    assert "✔ Task 2.1 (simple_self_attention): all" in check_output(chosen.cells[-1]), check_output(chosen.cells[-1])


def run_in_order(nb, folder):
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()


def check_output(cell):
    return "\n".join("".join(o.get("text", "")) or f"{o.get('ename')}: {o.get('evalue')}" for o in cell.outputs)


def carries_a_task(chapter):
    released = nbformat.read(REPO / "course" / f"{chapter}.ipynb", as_version=4)
    return any((grade_id(c) or "").startswith("carry_") for c in released.cells)


# Run whole, with every answer chosen: the chapters that carry nothing, one whose carried task's
# answer follows its paste cell, and one that carries a model with everything it builds on and
# then trains it. The masters test runs every chapter's own code top to bottom; what the edition
# adds in the others is its carried answers, which the next test runs in place.
TOP_TO_BOTTOM = tuple(c for c in CHAPTERS if not carries_a_task(c) or c in ("03_multihead_attention", "05_pretraining"))


@pytest.mark.slow
@pytest.mark.parametrize("chapter", TOP_TO_BOTTOM)
def test_the_edition_runs_top_to_bottom(edition, mirror_dir, monkeypatch, chapter):
    """With every answer chosen, nothing stalls: every check passes, in order."""
    kernel_env(monkeypatch, mirror_dir)
    # Chapter 05's training runs take one epoch here: the masters test runs them in full.
    monkeypatch.setenv("GPTCOURSE_QUICK_RUN", "1")
    nb = choose_answers(nbformat.read(edition / f"{chapter}.ipynb", as_version=4))
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(edition)}}).execute()  # raises on any error
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert printed.count("✔ Task ") == len(tasks_of(chapter)), printed[-2000:]


def last_carried_answer(nb):
    """The index of the answer cell of the notebook's last carried task."""
    carries = [i for i, c in enumerate(nb.cells) if (grade_id(c) or "").startswith("carry_")]
    return next(i for i in range(carries[-1], len(nb.cells)) if "answer" in nb.cells[i].metadata.get("tags", []))


@pytest.mark.slow
@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c not in TOP_TO_BOTTOM])  # each carries a task
def test_the_carried_answers_run_in_place(edition, mirror_dir, monkeypatch, chapter):
    """The chapters not run whole: their cells up to the last carried answer, every answer chosen,
    run without an error (the carried code defines what the chapter builds on)."""
    nb = choose_answers(nbformat.read(edition / f"{chapter}.ipynb", as_version=4))
    end = last_carried_answer(nb)
    kernel_env(monkeypatch, mirror_dir)
    nb.cells = nb.cells[:end + 1]
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(edition)}}).execute()  # raises on any error
