"""Chapter 06 after a wrong Task 6.1, cell by cell, as a student goes on after a failed check,
in JupyterLab in headless Chromium: what the page shows.

The wrong 6.1 returns the scaled logits without the softmax. What a student saw before: the
temperature demo printed the one-line note and then a traceback from inside the course's plot
helper ("probs must be probabilities ... apply softmax first"); the note came back on cells that
never call 6.1 (top-k, top-p, the cache's memory arithmetic: they reuse a loop variable's name,
`p`, that the temperature demo had made); and Task 6.4's check failed on a correct `generate`
without saying that it calls the wrong 6.1. The release's own cells are typed into a notebook
of their own and run one by one with Shift+Enter (a Run All would stop at the failed check).
"""
import os

import nbformat
import pytest

from browsers import headless_chromium
from factory import CORPUS, release_notebook
from lab_in_browser import LabServer, NotebookPage

pytestmark = pytest.mark.slow  # JupyterLab, a browser and a kernel (about 40 s)

CHAPTER = "06_sampling"
SAID = "Task 6.1's check failed above: this runs your code as it is."
ERROR = "application/vnd.jupyter.stderr"  # JupyterLab shows an error's traceback as this
PRINTED = "application/vnd.jupyter.stdout"


def release_cell(cell_id):
    return next("".join(cell["source"]) for cell in release_notebook(CHAPTER)["cells"] if cell.get("id") == cell_id)


CELLS = {
    "setup": release_cell("setup"),
    "helpers": release_cell("demo-helpers-code"),
    # What the training section would leave behind, as far as the cells below use it.
    "run": "import types\nrun = types.SimpleNamespace(cfg=dict(n_layers=2, emb_dim=8, context_length=16))",
    "toy": release_cell("demo-s2-toy"),
    "wrong 6.1": (CORPUS / "6.1" / "wrong_no_softmax.py").read_text(),
    "check 6.1": release_cell("check-6-1"),
    "temperatures": release_cell("demo-s2-temp"),
    "6.2": (CORPUS / "6.2" / "correct_topk_threshold.py").read_text()
    if (CORPUS / "6.2" / "correct_topk_threshold.py").exists() else None,
    "check 6.2": release_cell("check-6-2"),
    "top-k": release_cell("demo-s3-topk"),
    "6.3": None,
    "check 6.3": release_cell("check-6-3"),
    "top-p": release_cell("demo-s3-topp-toy"),
    "order": release_cell("demo-s3-order"),
    "memory": release_cell("demo-s5-memory"),
    "6.4": (CORPUS / "6.4" / "correct_break_before_append.py").read_text(),
    "check 6.4": release_cell("check-6-4"),
}


def _first_correct(task):
    return sorted((CORPUS / task).glob("correct_*.py"))[0].read_text()


@pytest.fixture(scope="module")
def outputs(mirror_dir, tmp_path_factory):
    """{cell name: [(data-mime-type, text)]}: what the page shows under each cell once run."""
    cells = dict(CELLS)
    cells["6.2"] = cells["6.2"] or _first_correct("6.2")
    cells["6.3"] = _first_correct("6.3")
    root = tmp_path_factory.mktemp("lab_root")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells.values()]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, root / "sampling.ipynb")
    env = dict(os.environ, GPTCOURSE_DATA_MIRROR=str(mirror_dir))
    env.pop("MPLBACKEND", None)  # the plots go into the page, as a student's do
    server = LabServer(root, tmp_path_factory.mktemp("lab_home"), env).start()
    try:
        with headless_chromium("the chapter 06 wrong-task test (tests/notebooks/test_failed_checks_sampling.py)") \
                as browser:
            notebook = NotebookPage(browser.new_page(viewport={"width": 1300, "height": 900}), server,
                                    "sampling.ipynb")
            shown = {}
            for index, name in enumerate(cells):
                notebook.run(index, timeout=180)
                shown[name] = notebook.outputs(index)
            return shown
    finally:
        server.stop()


def printed(outputs):
    return "".join(text for kind, text in outputs if kind == PRINTED)


def errors(outputs):
    return [text for kind, text in outputs if kind == ERROR]


def test_the_wrong_task_fails_its_check(outputs):
    [message] = errors(outputs["check 6.1"])
    assert "Task 6.1 (softmax_with_temperature) failed" in message
    for name in ("check 6.2", "check 6.3"):
        assert "✔ Task" in printed(outputs[name]) and not errors(outputs[name]), name


def test_the_demo_on_the_wrong_task_stops_with_one_sentence_and_no_course_traceback(outputs):
    assert printed(outputs["temperatures"]).startswith(SAID + "\n")
    [shown] = errors(outputs["temperatures"])
    assert " ".join(shown.split()).startswith("This cell stopped on what Task 6.1's code gave it, whose check "
                                              "failed above: "), shown
    assert "Traceback" not in shown and "gptcourse/" not in shown and "File " not in shown, shown


def test_the_note_is_only_on_cells_that_call_the_failed_task(outputs):
    for name in ("top-k", "top-p", "order", "memory"):
        assert SAID not in printed(outputs[name]), (name, printed(outputs[name]))
        assert not errors(outputs[name]), (name, errors(outputs[name]))


def test_no_output_shows_a_frame_of_the_course_package(outputs):
    for name, cell_outputs in outputs.items():
        for shown in errors(cell_outputs):
            assert "site-packages/gptcourse" not in shown and "course/gptcourse/" not in shown, (name, shown)


def test_a_check_that_fails_through_the_wrong_task_says_so_first(outputs):
    [message] = errors(outputs["check 6.4"])
    shown = " ".join(message.split())  # the page breaks its lines between words
    assert shown.startswith("SelfCheckFailed: Task 6.4's code calls your softmax_with_temperature (Task 6.1), "
                            "whose check failed above: fix that first"), message
    assert "Task 6.4 (generate) failed" in shown
