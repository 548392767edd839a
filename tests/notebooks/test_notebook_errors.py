"""What a student sees when a cell fails: one line naming the unfinished task, not a traceback.

The released notebooks run top to bottom with every task still a stub (allow_errors): every
demo or plot cell that fails must say, in one line, which task it needs; every failing check
cell shows its message without the course package's frames. Errors that have nothing to do
with an unfinished task keep their full traceback.
"""
import os
import re
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from factory import REPO, grade_id, one_line
from gptcourse.messages import SHOWN_WIDTH

NEEDS_TASK = re.compile(r"^This cell needs Task (\d\.\d) \(\w+\)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_notebook(nb, folder, mirror_dir, monkeypatch):
    """Execute `nb` with its cwd in `folder`, going on after errors, as "Run all" would not."""
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # Only the student package: the release must not need the grader.
    monkeypatch.setenv("PYTHONPATH", str(REPO / "course"))
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def errors(nb):
    """[(cell, traceback text)] of every code cell that ended with an error."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                found.append((cell, ANSI.sub("", "\n".join(output.traceback))))
    return found


def printed(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def needs_task_message(text):
    """The task a one-message error names ("This cell needs Task 2.3 ..."), or None: the message
    alone, no traceback, broken between words into lines the page shows whole."""
    found = NEEDS_TASK.match(one_line(text))
    if found is None or "Traceback" in text or max(len(line) for line in text.splitlines()) > SHOWN_WIDTH:
        return None
    return found.group(1)


def check_failure_shows_only_its_message(text):
    assert text.startswith("SelfCheckFailed: Task "), text
    assert "gptcourse" not in text and "Traceback" not in text and "File " not in text, text
    assert "---->" not in text, text  # no source lines of any frame


@pytest.fixture(scope="module")
def released_02(tmp_path_factory, mirror_dir):
    monkeypatch = pytest.MonkeyPatch()
    try:
        nb = nbformat.read(REPO / "course" / "02_attention.ipynb", as_version=4)
        yield run_notebook(nb, REPO / "course", mirror_dir, monkeypatch)
    finally:
        monkeypatch.undo()


@pytest.mark.slow
def test_release_02_demo_cells_that_need_a_task_say_which_in_one_line(released_02):
    demos = [(cell, text) for cell, text in errors(released_02) if not grade_id(cell).startswith("check_")]
    # 13 demo and plot cells used to stop with a raw NotImplementedError or NameError.
    assert len(demos) >= 13
    for cell, text in demos:
        assert needs_task_message(text), f"{cell.source[:200]}\n---\n{text}"
    needed = {needs_task_message(text) for _, text in demos}
    assert needed == {"2.1", "2.2", "2.3", "2.5"} | ({"2.4"} & needed)
    # A cell whose variables came from a cell that stopped for Task 2.3 needs Task 2.3 too.
    uses_attn_scores = next(t for c, t in demos if c.source.startswith("T = attn_scores.shape[0]"))
    assert one_line(uses_attn_scores).startswith("This cell needs Task 2.3 (SelfAttention_v2)")


@pytest.mark.slow
def test_release_02_failing_checks_show_no_course_package_frames(released_02):
    checks = [(cell, text) for cell, text in errors(released_02) if grade_id(cell).startswith("check_")]
    assert len(checks) == 5
    for _, text in checks:
        check_failure_shows_only_its_message(text)
        assert "not implemented yet" in " ".join(text.split())  # broken between words for the page


@pytest.mark.slow
def test_release_03_with_an_unfinished_chapter_02_beside_it(tmp_path, mirror_dir, monkeypatch):
    for chapter in ("02_attention", "03_multihead_attention"):
        shutil.copy(REPO / "course" / f"{chapter}.ipynb", tmp_path)
    nb = run_notebook(nbformat.read(tmp_path / "03_multihead_attention.ipynb", as_version=4),
                      tmp_path, mirror_dir, monkeypatch)

    carry = next(c for c in nb.cells if grade_id(c) == "carry_2_5")
    assert "Brought CausalAttention from 02_attention.ipynb; its self-check FAILED" in one_line(printed(carry))
    failures = errors(nb)
    demos = [(c, t) for c, t in failures if not grade_id(c).startswith("check_")]
    assert demos
    for cell, text in demos:
        assert needs_task_message(text), f"{cell.source[:200]}\n---\n{text}"
    # Chapter 02's class is a stub: the message points back to chapter 02.
    first = next(t for c, t in demos if c.source.startswith("torch.manual_seed(123)\nhead = "))
    assert one_line(first).startswith("This cell needs Task 2.5 (CausalAttention) from chapter 02")
    # The divisibility demo no longer reports the stub's NotImplementedError as the check.
    divisible = next(c for c in nb.cells if "d_out=5, context_length=6" in c.source)
    assert "NotImplementedError" not in printed(divisible)
    assert any(c is divisible and one_line(t).startswith("This cell needs Task 3.2") for c, t in demos)
    for _, text in [(c, t) for c, t in failures if grade_id(c).startswith("check_")]:
        check_failure_shows_only_its_message(text)


PROBE_CELLS = {
    "setup": 'from gptcourse.notebook import explain_unfinished_tasks\n'
             'explain_unfinished_tasks("02_attention")',
    "stub": "def simple_self_attention(inputs):\n    raise NotImplementedError()",
    "uses_stub": "weights = simple_self_attention(1)",
    "uses_blocked_variable": "print(weights)",
    "undefined_graded_name": "CausalAttention(3, 2, 6, 0.0)",
    "check_of_undefined_name": 'from gptcourse import check\ncheck("2.4", causal_attention_weights)',
    # Two stubs whose code is the same but for the cell it is in: each names its own task.
    "stub_v1": "class SelfAttention_v1:\n    def __init__(self):\n        raise NotImplementedError()",
    "stub_v2": "class SelfAttention_v2:\n    def __init__(self):\n        raise NotImplementedError()",
    "uses_stub_v2": "SelfAttention_v2()",
    "uses_stub_v1": "SelfAttention_v1()",
    "own_not_implemented": 'raise NotImplementedError("my own message")',
    "ungraded_stub": "def helper():\n    raise NotImplementedError()\nhelper()",
    "unknown_name": "print(no_such_variable)",
    # A cell that stops for another reason keeps its traceback; the cells after it that need what
    # it did not define say so in one line, down the chain (not three NameErrors after one error).
    "stops_early": "ids = [1, 2, 3]\nhistory = ids[5]",
    "needs_what_it_left_out": "print(history)",
    "needs_it_too": "total = history + 1",
    "needs_the_next_one": "print(total)",
    "interrupted": "def stop():\n    raise KeyboardInterrupt\n\n\nunfinished = stop()",
    "needs_the_interrupted_one": "print(unfinished)",
    "installed_by_a_module": 'namespace = {}\n'
                             'exec("from gptcourse.notebook import explain_unfinished_tasks\\n"\n'
                             '     "result = explain_unfinished_tasks(\'02_attention\')", namespace)\n'
                             'print("installed from a module:", namespace["result"])',
}


@pytest.mark.slow
def test_only_errors_of_unfinished_tasks_become_one_line(tmp_path, mirror_dir, monkeypatch):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, metadata={"name": name}) for name, source in PROBE_CELLS.items()]
    run_notebook(nb, tmp_path, mirror_dir, monkeypatch)
    shown = {c.metadata["name"]: one_line(t) for c, t in errors(nb)}
    assert all(max(len(line) for line in t.splitlines()) <= SHOWN_WIDTH for _, t in errors(nb) if "Traceback" not in t)

    assert shown["uses_stub"] == "This cell needs Task 2.1 (simple_self_attention): finish it above and run its cell first."
    assert shown["uses_blocked_variable"].startswith("This cell needs Task 2.1 (simple_self_attention)")
    assert shown["undefined_graded_name"].startswith("This cell needs Task 2.5 (CausalAttention)")
    assert shown["check_of_undefined_name"].startswith("This cell needs Task 2.4 (causal_attention_weights)")
    assert shown["uses_stub_v2"].startswith("This cell needs Task 2.3 (SelfAttention_v2)")
    assert shown["uses_stub_v1"].startswith("This cell needs Task 2.2 (SelfAttention_v1)")
    # Everything else keeps IPython's full traceback.
    assert "Traceback" in shown["own_not_implemented"] and "my own message" in shown["own_not_implemented"]
    assert "Traceback" in shown["ungraded_stub"] and "helper()" in shown["ungraded_stub"]
    assert "Traceback" in shown["unknown_name"] and "no_such_variable" in shown["unknown_name"]
    assert "Traceback" in shown["stops_early"] and "IndexError" in shown["stops_early"]
    number = {c.metadata["name"]: c.execution_count for c in nb.cells}
    stopped = (f"This cell needs `history`, which cell [{number['stops_early']}] did not define: that cell "
               "stopped with an IndexError. Fix it and run it again, then this cell.")
    assert shown["needs_what_it_left_out"] == shown["needs_it_too"] == stopped
    assert shown["needs_the_next_one"] == stopped.replace("`history`", "`total`")
    assert "KeyboardInterrupt" in shown["interrupted"]
    assert shown["needs_the_interrupted_one"] == (f"This cell needs `unfinished`, which cell [{number['interrupted']}] "
                                                  "did not define: it was interrupted. Run it again, then this cell.")
    assert set(shown) == {"uses_stub", "uses_blocked_variable", "undefined_graded_name", "check_of_undefined_name",
                          "uses_stub_v2", "uses_stub_v1", "own_not_implemented", "ungraded_stub", "unknown_name",
                          "stops_early", "needs_what_it_left_out", "needs_it_too", "needs_the_next_one",
                          "interrupted", "needs_the_interrupted_one"}
    modules = next(c for c in nb.cells if c.metadata["name"] == "installed_by_a_module")
    assert "installed from a module: False" in printed(modules)


def test_nothing_happens_outside_ipython():
    from gptcourse.notebook import explain_unfinished_tasks

    assert explain_unfinished_tasks("02_attention") is False


@pytest.mark.slow
def test_nbgrader_still_records_failed_check_cells(tmp_path, monkeypatch, mirror_dir):
    """The one-line messages change what a student sees, never a grade."""
    from factory import filled_notebook, release_notebook
    from grader.nbgrading import course as nbgrader_course

    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    chapter = "02_attention"
    nbgrader_course.make_course(tmp_path, chapters=(chapter,))
    nbgrader_course.add_submission(tmp_path, "untouched", chapter, release_notebook(chapter))
    nbgrader_course.add_submission(tmp_path, "solved", chapter, filled_notebook(chapter))
    nbgrader_course.autograde(tmp_path, chapter, seed=7, device="cpu")
    scores = nbgrader_course.scores(tmp_path)
    untouched = {task: score for (student, task), score in scores.items() if student == "untouched"}
    solved = {task: score for (student, task), score in scores.items() if student == "solved"}
    assert untouched and all(score == 0 for score, _ in untouched.values()), untouched
    assert solved and all(score == maximum > 0 for score, maximum in solved.values()), solved
    assert os.path.exists(tmp_path / "gradebook.db")
