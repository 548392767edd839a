"""The grader on submissions that break things: each gets the right score and a clear
message, only the broken task loses points, and the batch always completes."""
import json
import os
import stat

import pytest

from factory import filled_notebook, records_by_submission, release_notebook, run_grader, write_notebook, grade_id
from gptcourse.checking.tasks import tasks_of

CH02 = "02_attention"

# (submission, task whose cell is replaced, cell source, expected status, words in the feedback)
BROKEN_CELLS = [
    ("syntax_error", "2.1", "def simple_self_attention(inputs)\n    return inputs\n", "error", "syntax error"),
    ("infinite_loop_call", "2.2",
     "class SelfAttention_v1(nn.Module):\n    def __init__(self, d_in, d_out):\n        super().__init__()\n"
     "        while True:\n            pass\n", "timeout", "did not finish"),
    ("infinite_loop_top_level", "2.3", "while True:\n    pass\n", "timeout", "did not finish"),
    # Where the code was when it was stopped: the line of the cell, and what the grader was doing.
    ("loop_never_increments", "2.3", "x = 0\ni = 0\nwhile i < 3:\n    x += 1\n", "timeout",
     "was stopped at line 3 of your solution cell (an infinite loop"),
    # The loop's body replaces what it computes: `inputs = inputs + 0` on inputs that require grad
    # grows the autograd graph (about 0.5 KB a turn), and a fast machine reaches the memory cap
    # before the time limit (a "memory" verdict, whose message names the endless loop too).
    ("loop_in_the_function", "2.1",
     "def simple_self_attention(inputs):\n    i = 0\n    while i < 3:\n        scores = inputs @ inputs.T\n"
     "    return inputs, inputs\n", "timeout",
     "stopped at line 3 of your solution cell, while calling simple_self_attention(inputs)"),
    ("memory_bomb", "2.4",
     "def causal_attention_weights(attn_scores, d_k):\n    hog = [bytearray(10**8) for _ in range(1000)]\n"
     "    return attn_scores\n", "memory", "used more than the 1,024 MB memory limit and was stopped at line 2"),
    # torch's allocator fails under the cap (std::bad_alloc, "can't allocate memory"): the same
    # verdict, not a RuntimeError.
    ("graph_keeps_growing", "2.4",
     "def causal_attention_weights(attn_scores, d_k):\n    kept = []\n    while True:\n"
     "        kept.append(torch.ones(10**7, requires_grad=True) * 2)\n    return attn_scores\n", "memory",
     "memory limit and was stopped at line 4 of your solution cell, while calling causal_attention_weights"
     "(attn_scores, 2) — a loop that never ends, or one that keeps tensors that require grad"),
    ("one_huge_tensor", "2.4",
     "def causal_attention_weights(attn_scores, d_k):\n    big = torch.empty(10**11)\n    return attn_scores\n",
     "memory", "tried to allocate 372.5 GB at once, more than the 1,024 MB memory limit at line 2"),
    ("sys_exit_top_level", "2.5", "import sys\nsys.exit(3)\n", "error", "sys.exit"),
    ("os_exit_in_call", "2.1",
     "import os\ndef simple_self_attention(inputs):\n    os._exit(0)\n", "error", "os._exit"),
    ("eq_always_true", "2.1",
     "class Anything:\n    def __eq__(self, other):\n        return True\n"
     "def simple_self_attention(inputs):\n    return Anything(), Anything()\n", "error", "torch.tensor"),
    ("tensor_subclass_eq_true", "2.4",
     "class Liar(torch.Tensor):\n    def __eq__(self, other):\n        return True\n"
     "def causal_attention_weights(attn_scores, d_k):\n    return torch.zeros_like(attn_scores).as_subclass(Liar)\n",
     "failed", "not the expected"),
    ("monkeypatched_allclose", "2.4",
     "torch.allclose = lambda *args, **kwargs: True\nimport numpy\nnumpy.allclose = lambda *args, **kwargs: True\n"
     "def causal_attention_weights(attn_scores, d_k):\n    return torch.softmax(attn_scores, dim=-1)\n",
     "failed", "above the diagonal"),
    ("imports_the_grader", "2.5",
     "from grader.reference.ch02_attention import CausalAttention\n", "error", "does not define"),
    ("stub_left", "2.3", None, "error", "not implemented yet"),
    # A stub left as `pass`, and a function that forgot its return: said first, not what follows.
    ("left_as_pass", "2.4", "def causal_attention_weights(attn_scores, d_k):\n    pass\n", "error",
     "not implemented yet: the body of causal_attention_weights does nothing yet"),
    ("forward_left_as_pass", "2.5",
     "class CausalAttention(nn.Module):\n    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):\n"
     "        super().__init__()\n    def forward(self, x):\n        pass\n", "error",
     "not implemented yet: CausalAttention.forward does nothing yet"),
    ("no_return", "2.1",
     "def simple_self_attention(inputs):\n    weights = torch.softmax(inputs @ inputs.transpose(-2, -1), dim=-1)\n",
     "error", "simple_self_attention returned None: it should return 2 values"),
]


def _edited(check_edit):
    nb = filled_notebook(CH02)
    for cell in list(nb["cells"]):
        if grade_id(cell) == "check_2_3":
            if check_edit == "delete":
                nb["cells"].remove(cell)
            else:
                cell["source"] = "pass  # I don't like checks\n"
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    subs = root / "submissions"
    stub = {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in release_notebook(CH02)["cells"]
            if grade_id(c).startswith("task_")}
    for name, task, source, _, _ in BROKEN_CELLS:
        source = stub["task_" + task.replace(".", "_")] if source is None else source
        write_notebook(filled_notebook(CH02, {task: source}), subs / name / f"{CH02}.ipynb")
    write_notebook(_edited("delete"), subs / "check_cell_deleted" / f"{CH02}.ipynb")
    write_notebook(_edited("edit"), subs / "check_cell_edited" / f"{CH02}.ipynb")
    (subs / "not_json").mkdir(parents=True)
    (subs / "not_json" / f"{CH02}.ipynb").write_text('{"cells": [ {"cell_type": "code", "source": "x = ')
    write_notebook(filled_notebook(CH02), subs / "all_right" / f"{CH02}.ipynb")
    umask = os.umask(0o022)  # the usual umask: new files 0644 (test_grade_files_get_the_users_umask)
    try:
        records = run_grader([subs], root / "out", "--jobs", "2", "--timeout", "8", "--memory-mb", "1024",
                             "--device", "cpu", "--seed", "7")
    finally:
        os.umask(umask)
    return records_by_submission(records), root / "out"


@pytest.mark.parametrize("name,task,source,status,words", BROKEN_CELLS, ids=[b[0] for b in BROKEN_CELLS])
def test_broken_task_gets_zero_and_a_clear_message(graded, name, task, source, status, words):
    tasks, _ = graded
    record = tasks[name][task]
    assert (record["status"], record["points"]) == (status, 0), record
    assert words.lower() in record["feedback"].lower(), record["feedback"]
    for other, other_record in tasks[name].items():
        if other != task:
            assert other_record["points"] == other_record["max_points"], (other, other_record["feedback"])


@pytest.mark.parametrize("edit", ["deleted", "edited"])
def test_check_cell_changes_do_not_change_the_grade(graded, edit):
    tasks, _ = graded
    record = tasks[f"check_cell_{edit}"]["2.3"]
    assert record["points"] == record["max_points"]
    assert any(f"check cell of task 2.3 was {edit}" in note for note in record["notes"])


def test_invalid_notebook_json_scores_zero_with_a_message(graded):
    tasks, _ = graded
    assert sorted(tasks["not_json"]) == sorted(task.id for task in tasks_of(CH02))
    for record in tasks["not_json"].values():
        assert record["status"] == "error" and record["points"] == 0
        assert "not valid notebook JSON" in record["feedback"]


def test_batch_completes_and_writes_every_output(graded):
    tasks, out = graded
    assert all(r["points"] == r["max_points"] for r in tasks["all_right"].values())
    csv_lines = (out / "grades.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(tasks)
    for submission in tasks:
        feedback = (out / "feedback" / f"{submission}.md").read_text()
        assert "HIDDEN TESTS" not in feedback and "hidden_cases" not in feedback
    for record in json.loads((out / "grades.json").read_text()):
        for key in ("submission", "task", "names", "points", "max_points", "status", "feedback"):
            assert key in record


def test_grade_files_get_the_users_umask(graded):
    """Teaching assistants who share a grade folder must be able to read it: every file the
    grader writes (atomically or not) has the mode the umask gives new files, never mkstemp's 0600."""
    _, out = graded
    files = [path for path in out.rglob("*") if path.is_file()]
    assert {"grades.json", "grades.csv", "results.jsonl", "run.json", "report.html"} <= {p.name for p in files}
    assert any(p.parent.name == "feedback" for p in files)
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, (path, oct(path.stat().st_mode))
