"""The grader on a corpus of realistic student code (tests/corpus/<task>/*.py).

Each wrong implementation must lose exactly its own task's points, with a message that
names the mistake; each correct alternative must get full points. All items are graded in
one batch, the way an instructor grades a class.
"""
import pytest

from factory import corpus_items, filled_notebook, records_by_submission, run_grader, write_notebook
from gptcourse.tasks import TASKS

ITEMS = corpus_items()
SEED = "4242"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    for item in ITEMS:
        nb = filled_notebook(item.chapter, {item.task: item.source})
        write_notebook(nb, root / "submissions" / item.id / f"{item.chapter}.ipynb")
    records = run_grader([root / "submissions"], root / "out", "--jobs", "2", "--seed", SEED, "--device", "cpu")
    return records_by_submission(records)


def test_corpus_is_large_enough():
    for task in TASKS:
        kinds = [item.expect for item in ITEMS if item.task == task.id]
        assert kinds.count("wrong") >= 6, task.id
        assert kinds.count("correct") >= 2, task.id
    assert {item.expect for item in ITEMS} <= {"wrong", "correct"}


@pytest.mark.parametrize("item", [i for i in ITEMS if i.expect == "wrong"], ids=lambda i: i.id)
def test_wrong_implementation_loses_only_its_task(graded, item):
    tasks = graded[item.id]
    record = tasks[item.task]
    assert record["points"] == 0 and record["status"] in ("failed", "error"), record
    for other, other_record in tasks.items():
        if other != item.task:
            assert other_record["points"] == other_record["max_points"], (other, other_record["feedback"])
    feedback = record["feedback"].lower()
    assert any(keyword in feedback for keyword in item.keywords), (
        f"feedback does not name the mistake ({', '.join(item.keywords)}): {record['feedback']}")
    misleading = [word for word in item.absent if word in feedback]
    assert not misleading, f"feedback gives misleading advice ({', '.join(misleading)}): {record['feedback']}"


@pytest.mark.parametrize("item", [i for i in ITEMS if i.expect == "correct"], ids=lambda i: i.id)
def test_correct_alternative_gets_full_points(graded, item):
    for task, record in graded[item.id].items():
        assert record["status"] == "passed" and record["points"] == record["max_points"], (task, record["feedback"])


def test_header_lists_keep_commas_inside_brackets():
    from factory import split_header_list

    assert split_header_list("keep the dimension, [..., -1:], 1-d") == ["keep the dimension", "[..., -1:]", "1-d"]
    assert split_header_list("softmax(x, dim=-1), dim") == ["softmax(x, dim=-1)", "dim"]
    # A bracket that never closes is a word of its own, as before.
    assert split_header_list("min(num_batches, more batches than") == ["min(num_batches", "more batches than"]
    assert split_header_list("transpose, .t of, (in") == ["transpose", ".t of", "(in"]
    assert split_header_list("") == []
