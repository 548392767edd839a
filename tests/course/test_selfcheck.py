"""The public self-check: passes the reference and every correct alternative, catches the
corpus's wrong implementations with a specific message, and stays fast."""
import re
import time

import pytest

from factory import corpus_items, load, manifest
from gptcourse import SelfCheckFailed, check
from gptcourse.checking.probes import load_meta_kernels
from gptcourse.checking.tasks import TASKS, get_task
from gptcourse.messages import SHOWN_WIDTH
from grader.reference import reference_objects

ITEMS = corpus_items()


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_reference_passes_quickly(task, capsys):
    load_meta_kernels()  # a one-time import (about a second) that a notebook pays once, not per task
    started = time.perf_counter()
    check(task.id, *reference_objects(task.id).values())
    printed = capsys.readouterr().out
    assert time.perf_counter() - started < 5  # "well under a second" on a laptop; generous here
    assert printed.startswith(f"✔ Task {task.id} (")
    # Task 8.3 has a single case: "all 1 self-check cases passed" read as a slip of the course.
    assert re.search(r"(all ([2-9]|\d\d+) self-check cases|its self-check case) passed\.", printed), printed
    assert max(len(line) for line in printed.splitlines()) <= SHOWN_WIDTH, printed


@pytest.mark.parametrize("item", [i for i in ITEMS if i.expect != "wrong"], ids=lambda i: i.id)
def test_correct_alternatives_pass(item):
    check(item.task, *load(item.source, item.task))


WRONG = [i for i in ITEMS if i.expect == "wrong"]
_MESSAGES = {}  # item id -> the check's message: each wrong cell is checked once in this file


def message_of(item):
    """What check() says about a wrong corpus cell (None when the cell itself raises)."""
    if item.id not in _MESSAGES:
        try:
            objects = load(item.source, item.task)
        except Exception:
            _MESSAGES[item.id] = None
            return None
        with pytest.raises(SelfCheckFailed) as failure:
            check(item.task, *objects)
        _MESSAGES[item.id] = str(failure.value)
    return _MESSAGES[item.id]


# What a student must never read: the check's own names and reprs, and walls of digits.
INTERNAL = [r"\breference\b", r"reference's", r"tiny language model", r"toy classifier", r"stand-in",
            r"test weights", r"entries differ\)", r" object at 0x", r"\(\n\s+\(", r"\d\.\d{7,}"]


def internal_names(message):
    from gptcourse.checking.judge import _test_model_classes

    patterns = INTERNAL + [rf"\b{name}\b" for name in _test_model_classes()]
    return [match.group(0) for pattern in patterns for match in [re.search(pattern, message)] if match]


@pytest.mark.parametrize("item", WRONG, ids=lambda i: i.id)
def test_wrong_implementations_fail_with_a_message(item):
    message = message_of(item)
    if message is None:
        pytest.skip("the cell itself raises; the grader test covers it")  # not counted as passing
    assert f"Task {item.task}" in message
    assert any(k in message.lower() for k in item.keywords), message
    assert not [word for word in item.absent if word in message.lower()], message
    # Read in one breath: the first line says the task and what failed, never more than 200
    # characters; the case comes last; no name or repr of the check's own.
    assert len(message.splitlines()[0]) <= 200, message
    assert message.splitlines()[-1].startswith("(Checked on "), message
    assert not internal_names(message), (internal_names(message), message)


def test_most_failures_are_short():
    """The first line at most 160 characters and the whole message at most 600 in 95 % of the
    corpus's failures (all of them: the shares are of the whole corpus)."""
    messages = [m for m in (message_of(item) for item in WRONG) if m]
    long_first = [m.splitlines()[0] for m in messages if len(m.splitlines()[0]) > 160]
    long_whole = [m for m in messages if len(m) > 600]
    assert len(long_first) <= 0.05 * len(messages), long_first
    assert len(long_whole) <= 0.05 * len(messages), [m[:100] for m in long_whole]


def diagnosis(message):
    """The sentence that says why: after "It looks like", else the line before the case."""
    lines = message.splitlines()[:-1]
    for line in lines:
        if line.startswith("It looks like "):
            return line
    return lines[-1] if len(lines) > 1 else ""


NEIGHBOURS = [(item, other) for item in WRONG for other in item.neighbours]


@pytest.mark.parametrize("item, neighbour", NEIGHBOURS, ids=[f"{i.id}-{n}" for i, n in NEIGHBOURS])
def test_a_mistake_does_not_get_its_neighbours_diagnosis(item, neighbour):
    """Two cells of a task with the same symptom and different causes: the diagnosis that names the
    neighbour's cause is not given to this cell (a hint may only claim what the observation proves)."""
    other = next(i for i in WRONG if i.task == item.task and i.name == neighbour)
    theirs = diagnosis(message_of(other))
    assert theirs and message_of(other) != message_of(item)
    assert theirs not in message_of(item), (theirs, message_of(item))


def test_the_neighbours_cover_each_misleading_kind_seen():
    """The kinds of misleading hints a rating of the messages found, each with a neighbour here."""
    covered = {(item.task, item.name) for item, _ in NEIGHBOURS}
    for cell in [("2.4", "wrong_mask_times_inf"), ("6.2", "wrong_returns_probabilities"), ("6.3", "wrong_cumsum_dim0"),
                 ("5.7", "wrong_lr_never_written"), ("5.4", "wrong_evaluate_returns_swapped"),
                 ("6.5", "wrong_mask_offset_one_early"), ("6.5", "wrong_cache_cat_heads_dim")]:
        assert cell in covered, cell


def test_an_argmax_across_rows_is_said_in_every_task_where_it_happens():
    """One diagnosis for one kind of mistake, whatever the task (generation, accuracy,
    classification): what the code was seen doing, with its line."""
    for name in ("4.6__wrong_argmax_dim0", "6.4__wrong_greedy_argmax_dim0", "7.4__wrong_acc_argmax_dim0"):
        item = next(i for i in WRONG if i.id == name)
        assert "takes the argmax over dim 0 of a" in message_of(item), message_of(item)
    for name in ("4.6__wrong_argmax_no_dim", "7.5__wrong_argmax_every_position"):
        item = next(i for i in WRONG if i.id == name)
        assert "takes the argmax of a whole" in message_of(item), message_of(item)


def test_the_argmax_watch_notes_only_the_students_calls_across_rows_and_leaves_torch_as_it_was():
    import os

    import torch

    from gptcourse.checking.probes import _ArgmaxAcrossRows

    function, method = torch.argmax, torch.Tensor.argmax
    rows = torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 1.0]])
    with _ArgmaxAcrossRows() as watch:
        assert rows.argmax(dim=-1).tolist() == [1, 0] and torch.argmax(rows[0]).item() == 1
        assert torch.argmax(rows[:1]).item() == 1  # one row: the flat index is that row's own
        # A library's own call across rows (here: code compiled as if in torch's folder) is not the student's.
        exec(compile("torch.argmax(rows, dim=0)", os.path.join(os.path.dirname(torch.__file__), "_x.py"), "exec"))
        assert watch.noticed == ""
        assert torch.argmax(rows, axis=0).tolist() == [1, 0, 0]  # still the right answer
    assert watch.noticed.startswith("your code takes the argmax over dim 0 of a (2, 3) tensor at line ")
    with pytest.raises(ValueError), _ArgmaxAcrossRows() as watch:
        rows.argmax()
        raise ValueError("the student's code raised")
    assert "takes the argmax of a whole (2, 3) tensor at once" in watch.noticed
    assert torch.argmax is function and torch.Tensor.argmax is method and "argmax" not in vars(torch.Tensor)


def test_a_generate_that_samples_instead_of_argmax_fails_whatever_the_random_state():
    # The self-check runs on the student's random generator. With sharply peaked toy logits a
    # sampling generate_text_simple drew the greedy tokens by luck in 22 of 300 seeds and
    # passed; the toy model's logits are now gently peaked, so luck no longer helps.
    import torch

    from gptcourse.checking.chapters.toys import NextTokenModel

    probs = torch.softmax(NextTokenModel(13, 8)(torch.tensor([[3, 4]])), dim=-1)
    assert probs.max() < 0.5  # the greedy pick is far from certain at every position
    wrong = next(i for i in ITEMS if i.id == "4.6__wrong_multinomial")
    for seed in range(30):
        torch.manual_seed(seed)
        with pytest.raises(SelfCheckFailed):
            check("4.6", *load(wrong.source, "4.6"))


def test_unimplemented_stub_says_so():
    def simple_self_attention(inputs):
        raise NotImplementedError()

    with pytest.raises(SelfCheckFailed, match="not implemented yet"):
        check("2.1", simple_self_attention)


def test_unknown_task_and_missing_object_are_clear():
    with pytest.raises(KeyError, match="unknown task"):
        check("9.9", print)
    with pytest.raises(SelfCheckFailed, match="expected the function or class"):
        check("2.1", None)


def test_a_missing_name_of_an_earlier_chapter_points_to_the_carry_over_cell():
    """Task 3.1 builds on CausalAttention (task 2.5, chapter 02): when it is missing, the message
    says how to bring it in, not to define helpers in the solution cell."""
    m = manifest()
    task = get_task("3.1")
    namespace = {"__name__": "__main__"}
    for setup in m[task.chapter]["setup"]:
        exec(setup, namespace)
    exec(m[task.chapter]["tasks"][task.id]["source"], namespace)
    assert "CausalAttention" not in namespace
    with pytest.raises(SelfCheckFailed) as failure:
        check(task.id, namespace[task.names[0]])
    message = str(failure.value)
    assert "CausalAttention is the graded name of task 2.5" in message and "carry-over cell" in message
    assert "define helpers" not in message


def test_a_failure_is_shown_in_lines_that_break_only_between_words():
    """JupyterLab breaks a line too long for the error box anywhere, even inside a word: the
    message is shown with its long lines broken at spaces (tests/notebooks/test_jupyterlab.py
    measures the page). What the error holds stays as raised."""
    wrong = next(i for i in ITEMS if i.id == "2.1__wrong_dot_T")  # a 409-character line
    with pytest.raises(SelfCheckFailed) as failure:
        check("2.1", *load(wrong.source, "2.1"))
    raised = f"SelfCheckFailed: {failure.value}"
    [shown] = failure.value._render_traceback_()
    assert max(len(line) for line in raised.split("\n")) > 2 * SHOWN_WIDTH
    assert max(len(line) for line in shown.split("\n")) <= SHOWN_WIDTH
    assert shown.split() == raised.split()  # the same words in the same order, none cut
    assert shown.count("\n") > raised.count("\n")


def test_wrapping_keeps_long_words_hyphens_and_short_lines_whole():
    from gptcourse.messages import wrap_at_words

    path = "/a/very/long/path/that/does/not/fit/on/one/line/of/twenty/characters"
    assert wrap_at_words(f"see {path} here", width=20) == f"see\n{path}\nhere"
    assert wrap_at_words("the non-singleton dimension", width=16) == "the\nnon-singleton\ndimension"
    assert wrap_at_words("a  b\n  indented", width=20) == "a  b\n  indented"


def test_a_passed_check_prints_two_short_lines(capsys):
    check("2.1", *reference_objects("2.1").values())
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("✔ Task 2.1 (simple_self_attention): all ") and len(printed) == 2
    assert all(len(line) <= 72 for line in printed), printed


def test_an_interrupted_check_says_where_the_code_was_not_a_traceback():
    """The stop button, or nbgrader's Validate stopping a cell past its time limit, interrupts the
    student's endless loop: the check names the line of the cell, as the graders do."""
    import _thread
    import signal
    import threading

    # The interruption comes once the loop runs, and again while the check has not ended; after a
    # minute the loop gives up, and the test fails instead of stalling the suite. (One sent at a
    # fixed second was once lost, in a fresh clone, and the loop ran for good.) interrupt_main
    # does nothing while SIGINT is not Python's own handler: a kernel's cell runs under that one.
    looping, checked, give_up = threading.Event(), threading.Event(), threading.Event()

    def press_stop_while_it_loops():
        if looping.wait(120):
            for _ in range(12):
                _thread.interrupt_main()
                if checked.wait(5):
                    return
        give_up.set()

    namespace = {"looping": looping, "give_up": give_up}
    cell = ("def simple_self_attention(inputs):\n    scores = inputs @ inputs.T\n"
            "    while not give_up.is_set(): scores = inputs @ inputs.T; looping.set()\n    return scores, scores\n")
    exec(compile(cell, "<cell-in-a-kernel>", "exec"), namespace)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=press_stop_while_it_loops, daemon=True).start()
    try:
        with pytest.raises(SelfCheckFailed) as failed:
            check("2.1", namespace["simple_self_attention"])
    finally:
        checked.set()
        signal.signal(signal.SIGINT, handler)
    message = str(failed.value)
    assert "interrupted at line 3 of your solution cell, while calling simple_self_attention(" in message
    assert "infinite loop" in message
    assert failed.value._render_traceback_()[0].startswith("SelfCheckFailed: Task 2.1")


@pytest.mark.parametrize("cap_mb,limit", [(None, "the memory available"), (300, "the 300 MB memory limit")])
def test_a_check_that_ran_out_of_memory_says_so_in_the_graders_words(monkeypatch, cap_mb, limit):
    """A function that fails to allocate (under nbgrader, in a kernel with the grader's memory cap,
    gptcourse/checking/kernel_memory.py): the course grader's memory message, naming the cap when
    the kernel has one, not the MemoryError's own."""
    from gptcourse.checking import memory

    monkeypatch.setattr(memory, "_kernel_cap_mb", cap_mb)
    namespace = {}
    cell = "def simple_self_attention(inputs):\n    kept = []\n    raise MemoryError()\n"
    exec(compile(cell, "<cell-in-a-kernel>", "exec"), namespace)
    with pytest.raises(SelfCheckFailed) as failed:
        check("2.1", namespace["simple_self_attention"])
    message = str(failed.value)
    assert message.startswith("Task 2.1 (simple_self_attention) failed: ")
    assert (f"your code used more than {limit} and was stopped at line 3 of your solution cell, "
            f"while calling simple_self_attention(") in message
    assert "a loop that never ends" in message.lower()


def test_running_out_of_memory_in_the_checks_own_work_says_so_too(monkeypatch):
    """Once the student's code has filled the kernel, the check's own tensors may be what fails
    (torch's "can't allocate memory", outside the student's call): the same message."""
    from gptcourse.checking import selfcheck

    def no_memory(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: "
                           "you tried to allocate 4096 bytes. Error code 12 (Cannot allocate memory)")

    monkeypatch.setattr(selfcheck, "judge", no_memory)
    with pytest.raises(SelfCheckFailed) as failed:
        check("2.1", *reference_objects("2.1").values())
    assert str(failed.value).startswith("Task 2.1 (simple_self_attention): your code used more than the memory "
                                        "available and was stopped — a loop that never ends")


def known_mistakes_through_the_check():
    """[(task id, message, what check() says of the mistake's own code or None when it passes)]:
    every known mistake of the grader, written as code, checked as a student's code is."""
    import torch

    from grader.chapters import mistakes
    from grader.grading.expectations import names_with_mistake

    said = []
    for task in TASKS:
        for message, obj in mistakes(task.id):
            names = names_with_mistake(task.id, obj)
            torch.manual_seed(0)
            try:
                check(task.id, *names.values())
                said.append((task.id, message, None))  # only the hidden cases show it (an overflow)
            except SelfCheckFailed as failure:
                said.append((task.id, message, str(failure)))
    return said


def told_apart(task_id, one, other, text):
    """Whether two known mistakes give different observations (as the judge compares them) on the
    self-check case the message `text` is about (its last line names it)."""
    from gptcourse.checking.judge import _close
    from gptcourse.checking.selfcheck import load_fixtures

    def observed(entry, message):
        return next(m["observations"] for m in entry["mistakes"] if m["message"] == message)

    entries = [entry for entry in load_fixtures(get_task(task_id).chapter)[task_id]
               if f"(Checked on {entry['case']['label']}" in text.splitlines()[-1]]
    assert entries, text
    for entry in entries:
        mine, theirs = observed(entry, one), observed(entry, other)
        if set(mine) != set(theirs) or not all(_close(mine[k], theirs[k], "cpu") for k in mine):
            return True
    return False


def test_no_known_mistake_gets_the_diagnosis_of_another():
    """The neighbour test for every known mistake of the course: the grader's own code of each,
    run through the self-check, never gets the diagnosis of another mistake of its task that the
    failing case tells apart from it. (A wrong diagnosis this found: 6.5's chapter 03
    mistakes were written without a cache, so that each matched "each chunk attends only to
    itself"; 5.6's untied output head was named as untransposed Conv1D weights.) Most get their
    own diagnosis; the others a message from another path (an error's hint) that names the cause."""
    said = known_mistakes_through_the_check()
    by_task = {}
    for task_id, message, _ in said:
        by_task.setdefault(task_id, []).append(message)
    misleading = [(task_id, message, other) for task_id, message, text in said if text
                  for other in by_task[task_id] if other != message and other in text and other not in message
                  and told_apart(task_id, message, other, text)]
    assert misleading == []
    caught = [(message, text) for _, message, text in said if text]
    own = [message for message, text in caught if message in text]
    assert len(own) >= 0.9 * len(caught), [message for message, text in caught if message not in text]


def test_the_cache_task_s_chapter_03_mistakes_keep_the_cache_right():
    """Task 6.5's known chapter 03 mistakes are each that one mistake in a class whose cache works,
    as a student carries it into the class they extend: the softmax written by hand, right for
    the moderate scores of the self-check's cases, gives exactly the expected observations there.
    (Written without a cache, each of them also matched "each chunk attends only to itself".)"""
    from gptcourse.checking.judge import _close
    from grader.chapters import mistakes, public_cases
    from grader.grading.expectations import expectations, names_with_mistake, seeded_probe

    by_hand = next(obj for message, obj in mistakes("6.5") if message.startswith("the softmax is written by hand"))
    for case in public_cases("6.5"):
        expected, _ = expectations(case)
        got = seeded_probe(names_with_mistake("6.5", by_hand), case)
        differ = [k for k in expected if not k.startswith("internals/") and not _close(got.get(k), expected[k], "cpu")]
        assert differ == [], (case.label, differ)


def says_only_the_difference(message):
    """Whether a failure message is bare: besides its first line and the case, nothing but the
    difference of the values ("Not the expected values, largest difference ...") or a raw error."""
    lines = message.splitlines()
    first, middle = lines[0], lines[1:-1]
    reasons = [line for line in middle if not line.startswith("Not the expected values")
               and not re.search(r"differs at index|^\[.*\] is .*, expected ", line)]
    says_what_it_should_be = re.search(r"\b(should|must)\b", first)  # "... should return a str, got NoneType"
    return not reasons and not says_what_it_should_be and " — " not in first and "It looks like" not in message


@pytest.mark.parametrize("chapter", ["06", "09"])
def test_every_failure_of_the_sampling_and_instruction_chapters_names_a_cause_or_a_fix(chapter):
    """Chapter 06's messages at chapter 09's standard: no wrong cell of either gets only the
    difference of its values."""
    bare = [item.id for item in WRONG if item.task.startswith(f"{int(chapter)}.") and message_of(item)
            and says_only_the_difference(message_of(item))]
    assert bare == []


def test_a_bare_message_is_told_from_one_that_says_why():
    bare = ("Task 2.1 (simple_self_attention) failed: context vectors: not the expected values, largest difference "
            "3.582 at index [1, 1] (yours 4.233, expected 0.6515)\n(Checked on 6 tokens x 3 features, on the CPU.)")
    assert says_only_the_difference(bare)
    assert not says_only_the_difference(bare.replace("\n(Checked", "\nIt looks like the scores are used without a "
                                                                     "softmax\n(Checked"))
