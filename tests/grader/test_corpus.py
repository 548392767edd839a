"""The grader on a corpus of realistic student code (tests/corpus/<task>/*.py).

Each wrong implementation must lose exactly its own task's points, with a message that
names the mistake; each correct alternative must get full points. All items are graded in
one batch, the way an instructor grades a class; the first wrong and correct item of each
task with its whole chapter, the others with their own task only (see whole_chapter_items).
"""
import re

import pytest

from factory import corpus_items, filled_notebook, grade_id, records_by_submission, run_grader, write_notebook
from gptcourse.checking import findings
from gptcourse.checking.tasks import TASKS, task_of_cell

ITEMS = corpus_items()
SEED = "4242"


def whole_chapter_items():
    """The first wrong and the first correct item of each task: these are graded with their whole
    chapter, to check that a mistake costs its own task only. A task is graded from its own cell,
    with the reference in place of the earlier tasks, so every other item's other tasks would be
    graded from the same reference cells again: they are left out (see only_task_notebook)."""
    firsts = {}
    for item in ITEMS:
        firsts.setdefault((item.task, item.expect), item.id)
    return set(firsts.values())


WHOLE_CHAPTER = whole_chapter_items()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    for item in ITEMS:
        nb = filled_notebook(item.chapter, {item.task: item.source})
        if item.id not in WHOLE_CHAPTER:
            nb = only_task_notebook(nb, item.task)
        write_notebook(nb, root / "submissions" / item.id / f"{item.chapter}.ipynb")
    records = run_grader([root / "submissions"], root / "out", "--jobs", "2", "--seed", SEED, "--device", "cpu")
    return records_by_submission(records)


def only_task_notebook(nb, task_id):
    """The notebook without the other tasks' solution cells: the grader records those tasks as
    missing without running a worker, and grades this task exactly as in the whole notebook."""
    return dict(nb, cells=[c for c in nb["cells"]
                           if not grade_id(c).startswith("task_") or task_of_cell(grade_id(c)).id == task_id])


def other_tasks_to_check(item, tasks):
    """The other tasks' records of a whole-chapter item; none for an item graded alone."""
    return {task: record for task, record in tasks.items() if task != item.task} if item.id in WHOLE_CHAPTER else {}


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
    for other, other_record in other_tasks_to_check(item, tasks).items():
        assert other_record["points"] == other_record["max_points"], (other, other_record["feedback"])
    feedback = record["feedback"].lower()
    assert any(keyword in feedback for keyword in item.keywords), (
        f"feedback does not name the mistake ({', '.join(item.keywords)}): {record['feedback']}")
    misleading = [word for word in item.absent if word in feedback]
    assert not misleading, f"feedback gives misleading advice ({', '.join(misleading)}): {record['feedback']}"


@pytest.mark.parametrize("item", [i for i in ITEMS if i.expect == "correct"], ids=lambda i: i.id)
def test_correct_alternative_gets_full_points(graded, item):
    tasks = graded[item.id]
    for task, record in {item.task: tasks[item.task], **other_tasks_to_check(item, tasks)}.items():
        assert record["status"] == "passed" and record["points"] == record["max_points"], (task, record["feedback"])


def test_every_verdict_says_what_went_wrong_as_fields_too(graded):
    """The finding stored beside each message (gptcourse/checking/findings.py) agrees with the message: the
    class report groups on it, so it must say what the student reads, field by field."""
    for tasks in graded.values():
        for record in tasks.values():
            finding, feedback = findings.from_json(record["finding"]), record["feedback"]
            assert (finding is None) == (record["status"] == "passed"), record
            if finding is None:
                continue
            assert finding.kind in {"failed": ("known mistake", "wrong result"),
                                    "error": ("error", "rejected"), "timeout": ("timeout",)}[record["status"]], record
            if finding.case:
                assert feedback.startswith(f"Failed on {finding.case} [{finding.device}]: "), record
            problem = message_without_case(feedback)
            if finding.kind == "known mistake":
                assert problem == f"{finding.observed}: wrong — it looks like {finding.mistake}", record
            if finding.kind == "wrong result":  # the message may or may not name the observation
                assert finding.difference and finding.hint in problem, record
            if finding.error_type == "NotImplementedError":
                assert problem.startswith("not implemented yet"), record
            elif finding.error_type:
                assert f"{finding.error_type} while {finding.step}" in problem, record
            elif finding.step:
                assert problem.startswith(f"while {finding.step}"), record
            if finding.kind in ("rejected", "error") and not (finding.case or finding.step):
                assert finding.detail and finding.detail in feedback, record


def message_without_case(feedback):
    """What the grader says about the code: the feedback without "Failed on <case label> [device]: ",
    whose label may hold words a keyword looks for (a dropout case's label says "dropout")."""
    return re.sub(r"^Failed on .*? \[(cpu|cuda|meta)\]: ", "", feedback, count=1, flags=re.S)


def test_most_messages_name_the_mistake(graded, capsys):
    """The share of the corpus's wrong cells whose message, without the case's label, names the
    mistake (holds one of the item's keywords): the course's target is at least 80 %."""
    wrong = [item for item in ITEMS if item.expect == "wrong"]
    unnamed = [item.id for item in wrong
               if not any(k in message_without_case(graded[item.id][item.task]["feedback"]).lower()
                          for k in item.keywords)]
    share = 1 - len(unnamed) / len(wrong)
    with capsys.disabled():
        print(f"\n{len(wrong) - len(unnamed)} of {len(wrong)} wrong corpus cells ({share:.1%}) get a message that "
              f"names the mistake without the case label; not named: {', '.join(unnamed) or 'none'}")
    assert share >= 0.80


def test_the_case_label_is_cut_from_a_failure_only():
    assert message_without_case("Failed on train mode with dropout [meta]: no weight was dropped") == \
        "no weight was dropped"
    assert message_without_case("timed out after 60 s") == "timed out after 60 s"


def test_an_item_graded_alone_gets_the_grade_it_gets_in_its_whole_chapter(tmp_path):
    """What the shortcut above rests on: the other tasks' cells change nothing for a task. One
    wrong and one correct item of a chapter with carried tasks, each graded both ways."""
    picked = [next(i for i in ITEMS if i.task == "3.2" and i.expect == expect and i.id not in WHOLE_CHAPTER)
              for expect in ("wrong", "correct")]
    subs = tmp_path / "subs"
    for item in picked:
        nb = filled_notebook(item.chapter, {item.task: item.source})
        write_notebook(nb, subs / f"whole_{item.name}" / f"{item.chapter}.ipynb")
        write_notebook(only_task_notebook(nb, item.task), subs / f"alone_{item.name}" / f"{item.chapter}.ipynb")
    graded = records_by_submission(run_grader([subs], tmp_path / "out", "--jobs", "2", "--seed", SEED,
                                              "--device", "cpu"))
    for item in picked:
        whole, alone = graded[f"whole_{item.name}"], graded[f"alone_{item.name}"]
        assert [alone[item.task][k] for k in ("status", "points", "feedback")] == \
            [whole[item.task][k] for k in ("status", "points", "feedback")]
        assert {t: r["status"] for t, r in alone.items() if t != item.task} == {"3.1": "error"}  # missing: no worker
    assert graded[f"whole_{picked[0].name}"]["3.2"]["points"] == 0
    assert graded[f"whole_{picked[1].name}"]["3.2"]["points"] > 0


def test_header_lists_keep_commas_inside_brackets():
    from factory import split_header_list

    assert split_header_list("keep the dimension, [..., -1:], 1-d") == ["keep the dimension", "[..., -1:]", "1-d"]
    assert split_header_list("softmax(x, dim=-1), dim") == ["softmax(x, dim=-1)", "dim"]
    # A bracket that never closes is a word of its own, as before.
    assert split_header_list("min(num_batches, more batches than") == ["min(num_batches", "more batches than"]
    assert split_header_list("transpose, .t of, (in") == ["transpose", ".t of", "(in"]
    assert split_header_list("") == []
