"""Every master runs top to bottom, its check cells (self-checks and hidden tests) passing."""
import os
import time

import nbformat
import pytest
from nbclient import NotebookClient

from factory import REPO
from gptcourse.device import get_device
from gptcourse.checking.course import chapters
from gptcourse.checking.tasks import CHAPTERS

# What a chapter's run must print besides its checks, by the device the notebook runs on
# (gptcourse.get_device(): the GPU when there is one); {}: nothing beyond its checks. Every chapter
# has an entry, so that a new one is decided on (tests/chapter_entries.py names a chapter without).
# Chapter 05's CPU run brings the training loss on the-verdict below 1 (the issue's target for the
# CPU run); its GPU run is another run (GPT-2's shape on tinyshakespeare, three epochs) that
# prints its loss and speed.
EXPECTED_OUTPUT = {"01_text_data": {}, "02_attention": {}, "03_multihead_attention": {}, "04_gpt_model": {},
                   "05_pretraining": {"cpu": ["final training loss", "(below 1)", "tokens per second"],
                                      "cuda": ["final training loss", "tokens per second", "MFU (model FLOPs"]},
                   "06_sampling": {}, "07_classification": {}, "08_lora": {},
                   # Chapter 09 answers every test instruction and scores the answers.
                   # (and splits as its text says: the book's training set, 55 to test, 110 to validate)
                   "09_instruction": {"cpu": ["training 935, validation 110, test 55 entries", "55 responses saved to",
                                              "the model:", "chrF"]}}


def expected_output(chapter, device_type):
    """What the master must print when it runs on a device of this type (mps: as the CPU)."""
    expected = EXPECTED_OUTPUT[chapter]
    return expected.get(device_type, expected.get("cpu", []))


# Each chapter's stated budget on 2 CPU cores (gptcourse.checking.course; the README repeats it): what a student on a quiet
# laptop should see. It is not this test's timeout: timing on a busy machine is not a test (a cell
# passed 300 s only because two other notebooks ran beside it). benchmarks/masters_bench.py prints
# each master's time against its budget; this test only guards against a hang.
BUDGET_SECONDS = {chapter.name: chapter.budget_seconds for chapter in chapters()}
HANG_SECONDS = 1200  # per cell: four times the largest budget


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_master_runs_top_to_bottom(chapter, tmp_path, monkeypatch, mirror_dir):
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "course"), str(REPO)]))
    nb = nbformat.read(REPO / "solutions" / f"{chapter}.ipynb", as_version=4)
    # In the masters' own folder, as Jupyter would: chapter 03's carry-over cell loads the
    # chapter 02 master beside it.
    client = NotebookClient(nb, timeout=HANG_SECONDS, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO / "solutions")}})
    started = time.monotonic()
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    elapsed = time.monotonic() - started
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    check_cells = sum(1 for c in nb.cells if "run_hidden_tests" in c.source)
    assert check_cells == len([c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")])
    # In a master the hidden tests run first; once they pass, check() defers to them.
    assert outputs.count("hidden tests passed") == check_cells, outputs[-2000:]
    assert outputs.count("self-check skipped") == check_cells, outputs[-2000:]
    carried = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("carry_")]
    carried_said = "".join(o.get("text", "") for c in carried for o in c.outputs)  # (a later demo may quote them)
    assert carried_said.count("; its self-check passed.") == len(carried), carried_said
    for expected in expected_output(chapter, get_device().type):  # the device the notebook picks
        assert expected in outputs, (expected, outputs[-3000:])
    print(f"{chapter}: {elapsed:.1f} s on this machine (budget {BUDGET_SECONDS[chapter]} s on a quiet 2-core CPU)")


def test_the_cpu_run_must_go_below_1_and_a_gpu_run_need_not():
    """The GPU run is another run (tinyshakespeare): its loss is not held to the CPU's target."""
    assert "(below 1)" in expected_output("05_pretraining", "cpu")
    assert "(below 1)" not in expected_output("05_pretraining", "cuda")
    assert expected_output("05_pretraining", "mps") == expected_output("05_pretraining", "cpu")
    assert expected_output("01_text_data", "cuda") == []
