"""The student's real client: the release notebooks in JupyterLab, in headless Chromium.

Every other notebook test runs notebooks with nbclient, which never shows what a student sees.
Here the JupyterLab that `make setup` installs serves the release of chapter 02 and a chapter
05 whose tasks are solved (tests/lab_in_browser.py starts it and drives the page). Through the
page, the test types a known mistake and then correct code into Task 2.1's cell, runs cells
with Shift+Enter, and reads what the page shows: the check's message alone, in lines that never
break inside a word; the demo after the failed check saying first that it runs the code as it
is; the check passing; the attention heatmap drawn; chapter 05's training run's progress bar
moving while it trains and full at the end; the course's message that GPT-2's weights are not
at hand, broken only between words; and never JupyterLab's pop-up about Jupyter's news over
the page (`make setup` turns it off in the environment's JupyterLab).

It needs Debian's chromium (`apt-get install chromium`; .ci/run installs it) and fails, naming
it, without it. About 50 s on two idle cores: marked slow.
"""
import io
import os
import re
import shutil
import time

import numpy as np
import pytest
from PIL import Image

from browsers import headless_chromium
from factory import CORPUS, REPO, filled_notebook, load, release_notebook, write_notebook
from gptcourse import SelfCheckFailed, check
from lab_in_browser import LabServer, NotebookPage, line_breaks

pytestmark = pytest.mark.slow

CHAPTER_02, CHAPTER_05 = "02_attention", "05_pretraining"
MISTAKE = CORPUS / "2.1" / "wrong_softmax_dim0.py"  # the softmax over the columns
CORRECT = CORPUS / "2.1" / "correct_functional_softmax.py"
# A laptop's browser window with JupyterLab's file browser open. A check's box there holds about
# 84 characters: fewer than the longest line of MISTAKE's message as raised (101), more than 72.
WINDOW = {"width": 1100, "height": 900}
ERROR = "application/vnd.jupyter.stderr"  # JupyterLab shows an error's traceback as this
PRINTED = "application/vnd.jupyter.stdout"


def cell_index(chapter, cell_id):
    return next(i for i, cell in enumerate(release_notebook(chapter)["cells"]) if cell.get("id") == cell_id)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, mirror_dir):
    root = tmp_path_factory.mktemp("lab_root")
    shutil.copy(REPO / "course" / f"{CHAPTER_02}.ipynb", root)
    write_notebook(filled_notebook(CHAPTER_05), root / f"{CHAPTER_05}.ipynb")
    env = dict(os.environ, GPTCOURSE_DATA_MIRROR=str(mirror_dir),
               GPTCOURSE_QUICK_RUN="1")  # chapter 05 trains for one epoch: seconds, not minutes
    env.pop("MPLBACKEND", None)  # a non-interactive backend would keep the plots out of the page
    server = LabServer(root, tmp_path_factory.mktemp("lab_home"), env)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    with headless_chromium("the JupyterLab test (tests/notebooks/test_jupyterlab.py)") as launched:
        yield launched


def open_notebook(browser, lab, chapter):
    return NotebookPage(browser.new_page(viewport=WINDOW), lab, f"{chapter}.ipynb")


@pytest.fixture(scope="module")
def chapter_02(browser, lab):
    """Task 2.1 with a known mistake, then corrected, typed and run through the page; the demo
    after it (the heatmap) run after each."""
    task, checked, plot = (cell_index(CHAPTER_02, i) for i in ("task-2-1", "check-2-1", "plot-simple"))
    notebook = open_notebook(browser, lab, CHAPTER_02)
    try:
        notebook.run(cell_index(CHAPTER_02, "setup"))
        seen = {}
        for name, source in (("mistake", MISTAKE), ("correct", CORRECT)):
            notebook.type_code(task, source.read_text())
            notebook.run(task)
            notebook.run(checked)
            seen[name] = notebook.outputs(checked)
            seen[f"{name} lines"] = line_breaks(notebook.cell(checked).locator(".jp-OutputArea-output").first)
            notebook.run(plot)
            seen[f"{name} plot outputs"] = notebook.outputs(plot)
        seen["plot outputs"] = seen["correct plot outputs"]
        seen["news question shown"] = notebook.news_question_shown()  # long after the page was restored
        images = notebook.cell(plot).locator(".jp-RenderedImage img")
        seen["images"] = images.count()
        if seen["images"]:
            image = images.first
            seen["image size"] = image.evaluate("img => img.complete ? [img.naturalWidth, img.naturalHeight] : null")
            seen["image pixels"] = np.asarray(Image.open(io.BytesIO(image.screenshot())).convert("RGB"))
        return seen
    finally:
        notebook.page.close()


def test_a_known_mistake_typed_into_the_page_gets_the_check_s_message_alone(chapter_02):
    [(kind, text)] = chapter_02["mistake"]  # one box, the error's
    assert kind == ERROR
    assert text.startswith("SelfCheckFailed: Task 2.1 (simple_self_attention) failed: "), text
    assert "it looks like the softmax is taken over the wrong dimension" in " ".join(text.split()).lower(), text
    for frame_mark in ("Traceback", "File ", "---->", "Cell In[", "gptcourse"):
        assert frame_mark not in text, f"a traceback frame ({frame_mark!r}) in what the page shows:\n{text}"


def test_no_line_of_a_check_message_breaks_inside_a_word(chapter_02):
    """JupyterLab breaks a line too long for the box anywhere (CSS word-break: break-all); the
    page must show the message broken only between words. The box here is narrower than the
    message's longest line as raised, so the page would have to break that line itself."""
    with pytest.raises(SelfCheckFailed) as raised:
        check("2.1", *load(MISTAKE.read_text(), "2.1"))
    longest_raised = max(len(line) for line in f"SelfCheckFailed: {raised.value}".split("\n"))
    shown = chapter_02["mistake lines"]
    assert longest_raised > shown["fits_chars"], f"the window is too wide to test anything: {shown}"
    assert shown["visual_lines"] >= 3, shown
    assert shown["broken_words"] == [], f"words broken across two lines of the page: {shown['broken_words']}"
    assert chapter_02["correct lines"]["broken_words"] == [], chapter_02["correct lines"]


def test_the_demo_after_a_failed_check_says_first_that_it_runs_the_code_as_it_is(chapter_02):
    """A wrong Task 2.1 still runs in the demo below its check, and its heatmap looks like one:
    the demo says first, in one line, that it runs code whose check failed; once the check
    passes, it no longer does."""
    said = "Task 2.1's check failed above: this runs your code as it is."
    kind, text = chapter_02["mistake plot outputs"][0]
    assert kind == PRINTED and text.startswith(said + "\n"), chapter_02["mistake plot outputs"]
    assert not any(said in text for _, text in chapter_02["correct plot outputs"]), chapter_02["correct plot outputs"]


def test_no_news_pop_up_over_the_page(chapter_02, chapter_05):
    """JupyterLab asks every new user about Jupyter's news in a pop-up that stays over the cells
    and plots; `make setup` answers it in the environment's JupyterLab (gptcourse.lab_settings)."""
    assert not chapter_02["news question shown"]
    assert not chapter_05["news question shown"]


def test_the_corrected_task_passes_its_check_and_its_heatmap_is_drawn(chapter_02):
    [(kind, text)] = chapter_02["correct"]
    assert kind == PRINTED and re.match(r"✔ Task 2\.1 \(simple_self_attention\): all \d+ self-check cases passed",
                                        text), text
    assert ERROR not in [kind for kind, _ in chapter_02["plot outputs"]], chapter_02["plot outputs"]
    assert chapter_02["images"] == 1, f"no picture in the page; the cell showed: {chapter_02['plot outputs']}"
    width, height = chapter_02["image size"]  # None while the image has not loaded
    assert width > 300 and height > 300, chapter_02["image size"]
    pixels = chapter_02["image pixels"]
    colours = len(np.unique(pixels.reshape(-1, 3) // 8, axis=0))
    assert colours > 100, f"only {colours} colours: no heatmap in the picture?"


@pytest.fixture(scope="module")
def chapter_05(browser, lab):
    """Chapter 05 run up to its first training run, then that run, watched while it trains;
    then the cell that loads GPT-2's real weights, which the test's offline mirror lacks."""
    training, gpt2 = cell_index(CHAPTER_05, "demo-simple-run"), cell_index(CHAPTER_05, "demo-real-gpt2")
    notebook = open_notebook(browser, lab, CHAPTER_05)
    try:
        notebook.run_all_above(training)
        notebook.select(training)
        notebook.page.keyboard.press("Shift+Enter")
        states = watch_progress_bar(notebook, training)
        seen = {"states": states, "outputs": notebook.outputs(training)}
        notebook.run(gpt2)
        seen["gpt2 outputs"] = notebook.outputs(gpt2)
        seen["gpt2 lines"] = line_breaks(notebook.cell(gpt2).locator(".jp-OutputArea-output").first)
        seen["news question shown"] = notebook.news_question_shown()
        return seen
    finally:
        notebook.page.close()


# The first tqdm bar in a cell's output as ipywidgets draws it: its text and how full it is.
READ_PROGRESS_BAR = r"""cell => {
    const bar = cell.querySelector('.jp-OutputArea-output .widget-hprogress .progress-bar');
    if (!bar) return null;
    return {text: bar.closest('.widget-hbox').innerText.replace(/\u2007/g, ' ').replace(/\s+/g, ' '),
            width: bar.style.width, classes: bar.className};
}"""


def watch_progress_bar(notebook, index, timeout=300):
    """Every state the cell's progress bar shows until the cell has run, in order (about 6 s of
    training here; the limit is for a machine busy with other work)."""
    cell, states = notebook.cell(index), []
    prompt = cell.locator(".jp-InputPrompt")
    deadline = time.monotonic() + timeout
    while True:
        ran = re.search(r"\[\d+\]", prompt.inner_text())
        state = cell.evaluate(READ_PROGRESS_BAR)
        if state and (not states or state != states[-1]):
            states.append(state)
        if ran:
            return states
        if time.monotonic() > deadline:
            raise TimeoutError(f"the training cell did not finish within {timeout} s; its bar showed {states}")
        notebook.page.wait_for_timeout(100)


def steps(state):
    done, total = re.search(r"(\d+)/(\d+) \[", state["text"]).groups()
    return int(done), int(total)


def test_training_shows_a_progress_bar_that_moves_while_it_trains_and_fills(chapter_05):
    states, outputs = chapter_05["states"], chapter_05["outputs"]
    assert states, f"no progress bar in the page; the cell showed: {outputs}"
    assert not any("HBox(children" in text or "Loading widget" in text for _, text in outputs), outputs
    final = states[-1]
    done, total = steps(final)
    assert final["text"].startswith("simple run: 100%") and done == total > 1, final
    assert final["width"] == "100%" and "progress-bar-success" in final["classes"], final
    assert any(0 < steps(state)[0] < total for state in states), f"the bar never moved while training: {states}"
    assert ERROR not in [kind for kind, _ in outputs], outputs
    assert any("tokens per second" in text for _, text in outputs), outputs


def test_the_message_that_gpt2_s_weights_are_missing_breaks_only_between_words(chapter_05):
    """Offline, the cell that loads GPT-2 says why it skips: a sentence with the mirror's path in
    it, once one line that the page broke inside words (and inside the path)."""
    [(kind, text)] = chapter_05["gpt2 outputs"]
    assert kind == PRINTED and " ".join(text.split()).startswith("The GPT-2 weights are not available here"), text
    shown = chapter_05["gpt2 lines"]
    assert shown["visual_lines"] >= 3, shown  # a long message, on several lines
    assert shown["broken_words"] == [], f"words broken across two lines of the page: {shown['broken_words']}"
