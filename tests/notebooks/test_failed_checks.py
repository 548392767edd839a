"""What follows a failed check: the demos run the student's code as it is, and say so.

A Task 7.3 that freezes the new head too fails its check, yet chapter 07's next cell used to
print "trainable now: 198,144 (2.7%)" beside "out_head (new) 258", counting the head's
parameters whether they trained or not, and fine-tuning then reached nearly the same accuracy:
nothing on the page showed that the head never trained. Here that cell of the release runs on
a small GPTModel in a kernel, after the failed check and after a corrected one.
(tests/notebooks/test_jupyterlab.py sees the same one-line note in the page, in chapter 02.)
"""
import os

import nbformat
import pytest
from nbclient import NotebookClient

from factory import CORPUS, REPO, release_notebook

pytestmark = pytest.mark.slow  # a kernel (about 10 s)

CHAPTER = "07_classification"
SAID = "Task 7.3's check failed above: this runs your code as it is."
EMB_DIM = 8
HEAD = EMB_DIM * 2 + 2  # nn.Linear(emb_dim, 2): weights and biases


def release_cell(cell_id):
    return next("".join(cell["source"]) for cell in release_notebook(CHAPTER)["cells"] if cell.get("id") == cell_id)


CELLS = {
    "setup": release_cell("setup-code"),
    # What the carry-over cells and section 4 would bring: the course's reference, a small model.
    "earlier": "from grader.reference.ch04_gpt_model import GPTModel\n"
               "from grader.reference.ch05_pretraining import text_to_token_ids\n"
               "from gptcourse.pretrain import count_parameters, count_trainable\n"
               "device = torch.device('cpu')\n"
               f"base_cfg = dict(vocab_size=50257, context_length=16, emb_dim={EMB_DIM}, n_heads=2, n_layers=2, "
               "drop_rate=0.0, qkv_bias=False)",
    "model": "torch.manual_seed(0)\nmodel = GPTModel(base_cfg)",
    "wrong task": (CORPUS / "7.3" / "wrong_freezes_after_new_head.py").read_text(),
    "wrong check": release_cell("check-7-3"),
    "head after the wrong task": release_cell("demo-s5-head"),
    "uses its model": "print(type(model.out_head).__name__)",
    "a new model": "torch.manual_seed(0)\nmodel = GPTModel(base_cfg)",
    "uses the new model": "print(type(model.out_head).__name__)",
    "corrected task": (CORPUS / "7.3" / "correct_modules_list.py").read_text(),
    "corrected check": release_cell("check-7-3"),
    "head after the corrected task": release_cell("demo-s5-head"),
}


@pytest.fixture(scope="module")
def printed(mirror_dir, tmp_path_factory):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, metadata={"name": name}) for name, source in CELLS.items()]
    monkeypatch = pytest.MonkeyPatch()  # the kernel inherits this environment
    try:
        monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "course"), str(REPO)]))
        NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(tmp_path_factory.mktemp("kernel"))}}).execute()
    finally:
        monkeypatch.undo()
    return {cell.metadata["name"]: "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
            for cell in nb.cells}


def test_the_check_of_the_wrong_task_fails(printed):
    assert printed["wrong check"] == ""  # its message is an error, not printed text
    assert "✔ Task 7.3" in printed["corrected check"]


def test_demos_built_on_the_failed_task_say_so_first(printed):
    assert printed["head after the wrong task"].startswith(SAID + "\n")
    assert printed["uses its model"] == SAID + "\nLinear\n"  # the model the wrong task changed


def test_demos_that_no_longer_build_on_it_do_not(printed):
    assert printed["uses the new model"] == "Linear\n"  # made again by code whose checks passed
    assert SAID not in printed["head after the corrected task"]
    for name in ("setup", "earlier", "model", "a new model"):
        assert SAID not in printed[name], name


def test_the_head_s_parameters_count_as_trainable_only_when_they_train(printed):
    frozen = printed["head after the wrong task"].splitlines()
    trained = printed["head after the corrected task"].splitlines()
    assert f"  out_head (new)           0 of its {HEAD}" in frozen, frozen
    assert f"  out_head (new)  {HEAD:>10,} of its {HEAD}" in trained, trained
    trainable = [int(line.split()[2].replace(",", "")) for line in frozen + trained
                 if line.startswith("trainable now:")]
    assert trainable[1] - trainable[0] == HEAD, trainable
