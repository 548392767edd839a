"""The notebooks' GPT-2 branch, run against a stand-in for OpenAI's checkpoint.

Chapters 05 to 09 do something else when OpenAI's GPT-2 weights can be had (cached, mirrored
or downloadable): that is the branch students with internet take. The real file (548 MB) is
not in the offline mirror and no test machine reaches Hugging Face, so these tests use a
stand-in written exactly as the published file is, at small sizes (tests/gpt2_standin.py),
served by a web server on 127.0.0.1 that counts its requests. The data loader's own code
downloads it, checks it and caches it.

How the notebooks meet the stand-in, without a line of test code in what students get: every
notebook kernel first runs one test-only cell that replaces GPT-2's entry in the loader's
registry (`gptcourse.data.DATASETS`: the stand-in's address, sha256 and size) and gives GPT-2
small's configuration (`gptcourse.gpt2_weights.GPT2_124M_CONFIG`, the dict the notebooks and
`pretrained_base` build GPT-2 from) the stand-in's sizes. A second test-only cell, right
before the notebook's GPT-2 cell, wraps the notebook's `load_weights_into_gpt` so that the
model it fills computes the logits of fixed ids once, straight after loading: the test checks
them against GPT-2's forward pass written directly on the checkpoint's tensors.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import urllib.request

import nbformat
import pytest
import torch
from nbclient import NotebookClient

from factory import REPO
from gpt2_standin import (PUBLISHED_SIZE, STANDIN_SIZES, hf_gpt2_logits, published_header, published_names,
                          registry_entry, standin_config, standin_tensors, write_as_published)
from gptcourse import data, gpt2_weights
from gptcourse.finetune import pick_finetune_run, pretrained_base
from gptcourse.gpt2_weights import GPT2_124M_CONFIG, WEIGHTS_DATASET, read_safetensors
from gptcourse.instruct import pick_instruction_run
from gptcourse.pretrain import QUICK_ENV_VAR
from local_web_server import LocalWebServer

# GPT-2 ids of "Every effort moves you": the logits of the loaded model are compared on these.
EVERY_EFFORT_MOVES_YOU = [[6109, 3626, 6100, 345]]


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    """(path, tensors, cfg) of the stand-in checkpoint, written once for this module's tests."""
    cfg = standin_config()
    tensors = standin_tensors(cfg)
    path = tmp_path_factory.mktemp("www") / "model.safetensors"
    write_as_published(tensors, path)
    return path, tensors, cfg


@pytest.fixture(scope="module")
def server(standin):
    """Serves the stand-in as /model.safetensors and, with one byte changed, as
    /corrupted/model.safetensors."""
    path = standin[0]
    corrupted = path.parent / "corrupted" / "model.safetensors"
    corrupted.parent.mkdir()
    content = bytearray(path.read_bytes())
    content[-1000] ^= 0x01  # a bit of a weight, far from the header: the file still reads as safetensors
    corrupted.write_bytes(content)
    web = LocalWebServer(path.parent)
    yield web
    web.stop()


@pytest.fixture
def no_mirror_empty_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(data.MIRROR_ENV_VAR, raising=False)
    monkeypatch.setenv(data.CACHE_ENV_VAR, str(tmp_path / "cache"))
    return tmp_path / "cache"


def register(monkeypatch, path, url):
    """Put the test-only entry for the stand-in into the loader's registry (undone after the test)."""
    entry = registry_entry(path, url)
    monkeypatch.setitem(data.DATASETS, WEIGHTS_DATASET, entry)
    return entry


def refuse_network(monkeypatch):
    """Any download attempt fails the test loudly."""
    def no_network(*args, **kwargs):
        raise AssertionError(f"a download was attempted: {args[0]}")
    monkeypatch.setattr(urllib.request, "urlopen", no_network)


# ------------------------------------------------------------------------------------------
# The stand-in itself
# ------------------------------------------------------------------------------------------

def test_the_standin_is_laid_out_as_the_published_checkpoint(standin):
    path, tensors, cfg = standin
    raw = path.read_bytes()
    header_size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + header_size])
    assert header.pop("__metadata__") == {"format": "pt"}
    assert sorted(header) == sorted(published_names(cfg["n_layers"]))
    assert {entry["dtype"] for entry in header.values()} == {"F32"}
    e, c = cfg["emb_dim"], cfg["context_length"]
    assert header["h.1.attn.c_attn.weight"]["shape"] == [e, 3 * e]  # Conv1D: (in, out)
    assert header["h.0.attn.bias"]["shape"] == [1, 1, c, c]
    assert header["wte.weight"]["shape"] == [50257, e]
    assert 8 + header_size + max(entry["data_offsets"][1] for entry in header.values()) == len(raw)
    # Not padded, as the published header is not: the numbers start at an offset that is not a
    # multiple of 8, and the reader must not count on one.
    assert header_size % 8 != 0
    back = read_safetensors(path)  # the course's reader
    assert all(torch.equal(back[name], tensor) for name, tensor in tensors.items())


def test_at_gpt2_small_s_sizes_the_layout_gives_the_published_file_s_size():
    """The published file's size pins its tensors: the stand-in's names and shapes at GPT-2
    small's sizes make 548,090,880 bytes of float32 numbers, which leaves a header (with its
    8-byte length) of 14,291 bytes in the published file. Ours for the same tensors is within
    a few dozen bytes: the order of the tensors in the file changes the digits of the byte
    offsets. A missing or extra tensor, a mask of another size or dtype, could not fit."""
    e, c, v, layers = (GPT2_124M_CONFIG[k] for k in ("emb_dim", "context_length", "vocab_size", "n_layers"))
    block = {"ln_1.weight": (e,), "ln_1.bias": (e,), "attn.bias": (1, 1, c, c), "attn.c_attn.weight": (e, 3 * e),
             "attn.c_attn.bias": (3 * e,), "attn.c_proj.weight": (e, e), "attn.c_proj.bias": (e,),
             "ln_2.weight": (e,), "ln_2.bias": (e,), "mlp.c_fc.weight": (e, 4 * e), "mlp.c_fc.bias": (4 * e,),
             "mlp.c_proj.weight": (4 * e, e), "mlp.c_proj.bias": (e,)}
    shapes = {"wte.weight": (v, e), "wpe.weight": (c, e), "ln_f.weight": (e,), "ln_f.bias": (e,)}
    shapes.update({f"h.{b}.{name}": shape for b in range(layers) for name, shape in block.items()})
    assert sorted(shapes) == sorted(published_names(layers))
    numbers = sum(torch.Size(shape).numel() for shape in shapes.values())
    published_header_bytes = PUBLISHED_SIZE - 4 * numbers
    assert published_header_bytes == 14_291
    assert abs(published_header_bytes - (8 + len(published_header(shapes)))) < 100
    assert PUBLISHED_SIZE == data.DATASETS[WEIGHTS_DATASET].size


# ------------------------------------------------------------------------------------------
# Download, cache, checksum and mirror, through the loader's own code
# ------------------------------------------------------------------------------------------

def test_the_weights_are_downloaded_once_then_read_from_the_cache(standin, server, no_mirror_empty_cache,
                                                                    monkeypatch):
    path, tensors, _ = standin
    entry = register(monkeypatch, path, server.url("model.safetensors"))
    before = len(server.requested_paths)
    fetched = data.fetch(WEIGHTS_DATASET)  # no url= override: the registry's address
    assert fetched == no_mirror_empty_cache / "gpt2" / "model.safetensors"
    assert server.requested_paths[before:] == ["/model.safetensors"]
    assert fetched.stat().st_size == entry.size and data.sha256_of(fetched) == entry.sha256
    state = gpt2_weights.load_gpt2_state_dict()  # a second fetch: from the cache
    assert len(server.requested_paths) == before + 1
    assert all(torch.equal(state[name], tensor) for name, tensor in tensors.items())
    assert list(no_mirror_empty_cache.rglob("*.part")) == []


def test_a_corrupted_byte_is_refused_with_the_loader_s_message(standin, server, no_mirror_empty_cache,
                                                                monkeypatch, capsys):
    path = standin[0]
    entry = register(monkeypatch, path, server.url("corrupted/model.safetensors"))
    with pytest.raises(data.ChecksumError) as refused:
        data.fetch(WEIGHTS_DATASET)
    message = str(refused.value)
    assert message.startswith(f"Checksum mismatch for 'gpt2/model.safetensors' from {entry.url}")
    assert entry.sha256 in message
    assert data.sha256_of(path.parent / "corrupted" / "model.safetensors") in message
    assert not (no_mirror_empty_cache / "gpt2" / "model.safetensors").exists()  # nothing kept
    assert list(no_mirror_empty_cache.rglob("*.part")) == []
    # A notebook's GPT-2 cell then skips, with the loader's message as its one line.
    assert gpt2_weights.try_load_gpt2_state_dict() is None
    said = capsys.readouterr().out
    assert "not available here" in said and "Checksum mismatch for 'gpt2/model.safetensors'" in said


def link_mirror_files(mirror_dir, folder):
    """Links in `folder` to the course mirror's files, but for GPT-2's weights: a room whose mirror
    holds the real ones must not see them overwritten through a link."""
    for dataset in data.DATASETS.values():
        if dataset.name != WEIGHTS_DATASET and (mirror_dir / dataset.filename).is_file():
            (folder / dataset.filename).parent.mkdir(parents=True, exist_ok=True)
            (folder / dataset.filename).symlink_to(mirror_dir / dataset.filename)


@pytest.fixture
def standin_in_a_mirror(standin, mirror_dir, tmp_path, monkeypatch):
    """A workshop room without internet: the course's mirror with the weights added as
    gpt2/model.safetensors, and any download attempt an error."""
    path = standin[0]
    mirror = tmp_path / "mirror"
    link_mirror_files(mirror_dir, mirror)
    shutil.copyfile(path, mirror / "gpt2" / "model.safetensors")
    register(monkeypatch, path, "http://127.0.0.1:9/never-asked")
    monkeypatch.setenv(data.MIRROR_ENV_VAR, str(mirror))
    monkeypatch.setenv(data.CACHE_ENV_VAR, str(tmp_path / "cache"))
    refuse_network(monkeypatch)
    return mirror


def test_a_mirrored_checkpoint_is_used_without_any_download(standin, standin_in_a_mirror, tmp_path):
    tensors = standin[1]
    assert data.fetch(WEIGHTS_DATASET) == standin_in_a_mirror / "gpt2" / "model.safetensors"
    state = gpt2_weights.try_load_gpt2_state_dict()
    assert state is not None and all(torch.equal(state[name], tensor) for name, tensor in tensors.items())
    assert not (tmp_path / "cache").exists()  # the mirror needs no cache


# ------------------------------------------------------------------------------------------
# pretrained_base and the runs it leads to, on a CPU and on a (faked) GPU
# ------------------------------------------------------------------------------------------

@pytest.fixture
def standin_as_gpt2_small(standin, standin_in_a_mirror, monkeypatch):
    """The stand-in in a mirror, GPT-2 small's configuration at the stand-in's sizes, full runs."""
    for key, value in STANDIN_SIZES.items():
        monkeypatch.setitem(GPT2_124M_CONFIG, key, value)
    monkeypatch.delenv(QUICK_ENV_VAR, raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return standin


def base_model_on(device, GPTModel):
    from grader.reference.ch05_pretraining import load_weights_into_gpt

    def not_called(*args, **kwargs):
        raise AssertionError("with GPT-2's weights at hand nothing is pretrained")

    return pretrained_base(device, None, GPTModel, load_weights_into_gpt, train_model=not_called,
                           create_dataloader_v1=not_called)


def test_pretrained_base_on_a_cpu_is_gpt2_and_computes_what_the_checkpoint_computes(standin_as_gpt2_small, capsys):
    from grader.reference.ch04_gpt_model import GPTModel

    _, tensors, cfg = standin_as_gpt2_small
    model, base_cfg, base = base_model_on("cpu", GPTModel)
    assert base == "gpt2" and base_cfg == cfg
    assert "base model: GPT-2 small (124M)" in capsys.readouterr().out
    ids = torch.tensor(EVERY_EFFORT_MOVES_YOU)
    with torch.no_grad():
        torch.testing.assert_close(model.eval()(ids), hf_gpt2_logits(tensors, cfg, ids), rtol=1e-5, atol=1e-4)
    finetune, instruct = pick_finetune_run("cpu", base), pick_instruction_run("cpu", base)
    assert finetune.name == "GPT-2 124M on a CPU, a shortened run" and finetune.train_batches == 40
    assert instruct.name == "GPT-2 on a CPU, a shortened run" and instruct.train_batches == 40


def test_pretrained_base_on_a_faked_gpu_moves_gpt2_there_and_leads_to_the_book_s_runs(standin_as_gpt2_small,
                                                                                      monkeypatch):
    """No CUDA here: a GPTModel whose .to() only notes the device stands in for the move, and an
    H100's properties stand in for the card the runs are picked for (tests/fake_gpus.py)."""
    from fake_gpus import pretend_gpu
    from grader.reference.ch04_gpt_model import GPTModel

    pretend_gpu(monkeypatch, "H100")

    class NotesItsDevice(GPTModel):
        def to(self, device):
            self.moved_to = torch.device(device)
            return self

    model, _, base = base_model_on(torch.device("cuda"), NotesItsDevice)
    assert base == "gpt2" and model.moved_to == torch.device("cuda")
    finetune = pick_finetune_run(model.moved_to, base)
    assert finetune.name == "GPT-2 124M, the book's run"
    assert (finetune.num_epochs, finetune.train_batches, finetune.accuracy_batches) == (5, None, None)
    instruct = pick_instruction_run(model.moved_to, base)
    assert instruct.name == "GPT-2, the book's run"
    assert (instruct.num_epochs, instruct.train_batches, instruct.test_responses) == (2, None, None)


# ------------------------------------------------------------------------------------------
# Each notebook's GPT-2 branch, end to end in quick mode
# ------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Branch:
    marker: str  # text of the cell that loads GPT-2 (directly, or through pretrained_base or instruction_base)
    printed: list  # what the GPT-2 branch prints
    # None: the whole notebook runs. Otherwise only the GPT-2 cell runs, after the setup, carry-over
    # and task cells and the cells with these texts: what the GPT-2 cell needs.
    needs: list | None = None
    # With needs=None: the notebook runs from the GPT-2 cell up to the cell with this text (None: to
    # the end). Chapter 07 runs to its end; chapters 08 and 09 repeat its fine-tuning and scoring at
    # length, so they stop once the base model and the run it leads to are there.
    until: str | None = None


BRANCHES = {
    # Chapter 05's GPT-2 section is one cell (generate, validation loss); the rest of the notebook
    # trains its own small GPT and needs no GPT-2: about 90 s of a quick run spared.
    "05_pretraining": Branch("gpt2_state = try_load_gpt2_state_dict()", ["GPT-2 writes:", "GPT-2's validation loss"],
                             needs=["from gptcourse.gpt2_weights import", 'text = read_text("the-verdict")',
                                    "train_ratio = 0.90"]),
    # Chapters 07 to 09: everything after the base model's cell fine-tunes, evaluates and uses GPT-2.
    "07_classification": Branch("= pretrained_base(device", ["base model: GPT-2 small (124M)",
                                                             "GPT-2 124M on a CPU, a shortened run"]),
    "08_lora": Branch("= pretrained_base(device", ["base model: GPT-2 small (124M)",
                                                   "GPT-2 124M on a CPU, a shortened run"],
                      until="full_history = train_classifier("),
    "09_instruction": Branch("= instruction_base(device", ["base model: GPT-2 small (124M)",
                                                          "GPT-2 on a CPU, a shortened run"],
                             until="run = pick_instruction_run("),
}
# What the offline branch prints: never seen here.
OFFLINE_BRANCH = ["not available here", "No GPT-2 weights here", "go on without them"]


def code_cell(source):
    return nbformat.v4.new_code_cell(source)


def standin_cell(entry):
    """The first cell of every kernel: the test-only registry entry and GPT-2 small's sizes."""
    return code_cell(
        "# Test-only (tests/notebooks/test_gpt2_branch.py): GPT-2 is the stand-in served on 127.0.0.1, at its sizes.\n"
        "from gptcourse import data as _data, gpt2_weights as _gpt2_weights\n"
        f"_data.DATASETS[{WEIGHTS_DATASET!r}] = _data.Dataset(**{dataclasses.asdict(entry)!r})\n"
        f"_gpt2_weights.GPT2_124M_CONFIG.update({STANDIN_SIZES!r})\n")


def logits_recorder_cell(logits_path):
    """Right before the GPT-2 cell: the notebook's load_weights_into_gpt, then the loaded model's
    logits of fixed ids, saved for the test."""
    return code_cell(
        "# Test-only (tests/notebooks/test_gpt2_branch.py): note the logits of the model GPT-2 is loaded into.\n"
        "import torch as _torch\n"
        "_notebooks_load_weights_into_gpt = load_weights_into_gpt\n\n\n"
        "def load_weights_into_gpt(gpt, params):\n"
        "    _notebooks_load_weights_into_gpt(gpt, params)\n"
        "    with _torch.no_grad():\n"
        "        training = gpt.training\n"
        f"        _torch.save(gpt.eval()(_torch.tensor({EVERY_EFFORT_MOVES_YOU!r})).cpu(), {str(logits_path)!r})\n"
        "        gpt.train(training)\n")


def runs_before_the_gpt2_cell(cell, branch):
    if branch.needs is None:
        return True
    grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
    return (cell.cell_type == "code" and (grade_id in ("colab", "setup") or grade_id.startswith(("carry_", "task_"))
                                          or any(text in cell.source for text in branch.needs)))


def with_test_cells(nb, branch, entry, logits_path):
    """The notebook's cells to run, with the two test-only cells."""
    cells = nb.cells
    index = next((i for i, c in enumerate(cells) if c.cell_type == "code" and branch.marker in c.source), None)
    assert index is not None, f"no cell with {branch.marker!r}: the notebook changed, update BRANCHES"
    before = [c for c in cells[:index] if runs_before_the_gpt2_cell(c, branch)]
    last = len(cells) - 1 if branch.until is None else next(
        i for i, c in enumerate(cells) if i >= index and c.cell_type == "code" and branch.until in c.source)
    after = cells[index:last + 1] if branch.needs is None else cells[index:index + 1]
    nb.cells = [standin_cell(entry)] + before + [logits_recorder_cell(logits_path)] + after
    return nb


@pytest.fixture(scope="module")
def notebook_room(standin, tmp_path_factory, mirror_dir):
    """One folder of masters (the carry-over cells read the earlier chapters beside them), one
    web server and one cache, shared by the four notebooks: the first downloads the stand-in, the
    others must find it in the cache. The cache starts with the mirror's other files (the loader
    checks them there as it would a download), since no kernel has a mirror."""
    folder = tmp_path_factory.mktemp("notebooks")
    for master in (REPO / "solutions").glob("*.ipynb"):
        shutil.copyfile(master, folder / master.name)
    cache = tmp_path_factory.mktemp("cache")
    link_mirror_files(mirror_dir, cache)
    server = LocalWebServer(standin[0].parent)
    yield folder, cache, server, registry_entry(standin[0], server.url("model.safetensors"))
    server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("chapter", sorted(BRANCHES))
def test_the_gpt2_branch_of_the_notebook_runs_end_to_end(chapter, standin, notebook_room, monkeypatch):
    folder, cache, server, entry = notebook_room
    _, tensors, cfg = standin
    monkeypatch.delenv(data.MIRROR_ENV_VAR, raising=False)  # the weights are downloaded, or cached
    monkeypatch.setenv(data.CACHE_ENV_VAR, str(cache))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)  # tiktoken's files then come from `cache` too
    monkeypatch.setenv(QUICK_ENV_VAR, "1")
    monkeypatch.setenv("GPTCOURSE_DEVICE", "cpu")  # the CPU branch, also on a machine with a GPU
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "course"), str(REPO)]))
    logits_path = folder / f"{chapter}-logits.pt"
    nb = with_test_cells(nbformat.read(folder / f"{chapter}.ipynb", as_version=4), BRANCHES[chapter], entry,
                         logits_path)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()

    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    for expected in BRANCHES[chapter].printed:
        assert expected in printed, (expected, printed[-3000:])
    for offline in OFFLINE_BRANCH:
        assert offline not in printed, (offline, printed[-3000:])
    assert server.requested_paths == ["/model.safetensors"]  # downloaded by the first notebook only
    ids = torch.tensor(EVERY_EFFORT_MOVES_YOU)
    loaded_logits = torch.load(logits_path, weights_only=True)
    torch.testing.assert_close(loaded_logits, hf_gpt2_logits(tensors, cfg, ids), rtol=1e-5, atol=1e-4)
