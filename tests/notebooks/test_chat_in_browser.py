"""The chat panel in JupyterLab, in headless Chromium: type a prompt, press Enter, watch the
answer grow, stop a long one, and read "why this token" (gptcourse.chat; the widgets travel over
the kernel's own connection). The model is a small GPT with random weights, with the course's
reference generate: what is tested is the panel, not a model."""
import os

import nbformat
import pytest

from browsers import headless_chromium
from factory import REPO
from lab_in_browser import LabServer, NotebookPage, stop_the_chat_answer, watch_a_chat_answer_grow

pytestmark = pytest.mark.slow  # JupyterLab, a browser and a kernel (about 40 s)

CELL = '''import torch
from gptcourse import get_encoding
from gptcourse.chat import Settings, chat_panel
from grader.reference.ch04_gpt_model import GPTModel
from grader.reference.ch06_sampling import generate, softmax_with_temperature, top_k_logits, top_p_logits

torch.manual_seed(0)
cfg = {"vocab_size": 50257, "context_length": 512, "emb_dim": 96, "n_heads": 4, "n_layers": 4, "drop_rate": 0.0,
       "qkv_bias": False}
model = GPTModel(cfg).eval()
panel = chat_panel({"a small test model": model}, get_encoding(),
                   settings=Settings(temperature=1.0, top_k=50, top_p=0.95, max_new_tokens=400))
'''


@pytest.fixture(scope="module")
def page(tmp_path_factory, mirror_dir):
    root = tmp_path_factory.mktemp("chat_root")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, root / "chat.ipynb")
    env = dict(os.environ, GPTCOURSE_DATA_MIRROR=str(mirror_dir),
               PYTHONPATH=os.pathsep.join([str(REPO / "course"), str(REPO)]))
    env.pop("MPLBACKEND", None)
    server = LabServer(root, tmp_path_factory.mktemp("chat_home"), env).start()
    try:
        with headless_chromium("the chat panel's browser test") as browser:
            notebook = NotebookPage(browser.new_page(viewport={"width": 1400, "height": 1000}), server, "chat.ipynb")
            notebook.run(0)
            notebook.page.wait_for_selector(".widget-text input", timeout=60_000)
            yield notebook.page
    finally:
        server.stop()


def test_an_answer_grows_token_by_token_and_stop_ends_it(page):
    prompt = "Every effort moves you"
    seen = watch_a_chat_answer_grow(page, prompt)
    assert len(seen) >= 4, seen  # the prompt, then at least three longer answers
    assert all(len(a) < len(b) for a, b in zip(seen, seen[1:]))
    used = stop_the_chat_answer(page)
    assert "seed 123" in used and "tokens/s" in used


def test_why_this_token_shows_probabilities_that_add_up(page):
    page.get_by_role("button", name="why this token").click()
    table = page.locator(".widget-output pre").filter(has_text="after filters")
    table.wait_for(timeout=60_000)
    rows = table.inner_text().splitlines()[1:]
    assert rows[-1].startswith("others") and len(rows) == 9
    before = sum(float(row.split()[-2].rstrip("%")) for row in rows)
    after = sum(float(row.split()[-1].rstrip("%")) for row in rows)
    assert abs(before - 100) < 0.6 and abs(after - 100) < 0.6, rows  # nine shares rounded to 0.1 %
