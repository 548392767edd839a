"""Chapter 09's grading: cases for every seed, the device check of the collate function, the
prompt messages, the runs the notebook picks, and the reference package against the book's values
for chapter 09."""
import pytest
import torch

from gptcourse.checking.probes import ProbeContext, run_probe


@pytest.mark.parametrize("task_id", ["9.1", "9.2"])
def test_hidden_cases_can_be_drawn_for_many_seeds(task_id):
    from grader.chapters import hidden_cases
    from grader.grading.expectations import expectations

    for seed in (4242, *range(12)):
        for case in hidden_cases(task_id, seed):
            expected, _ = expectations(case)  # raises when the reference fails on the case
            assert "error" not in expected


def test_no_collate_case_holds_the_padding_token_inside_an_entry():
    # Where an entry held pad_token_id, "padding after the first" and "pad_token_id after the
    # first" would disagree; the task rules it out, so the cases must too.
    from grader.chapters import hidden_cases, public_cases

    for case in public_cases("9.2") + hidden_cases("9.2", "4242") + hidden_cases("9.2", "7"):
        pad = case.args.get("pad_token_id", 50256)
        assert all(pad not in entry for entry in case.args["batch"]), case.label


def _collate_case(device):
    from grader.chapters import public_cases

    return public_cases("9.2")[0].on(device)


def test_tensors_left_on_the_cpu_are_caught_on_the_meta_device():
    def stays_on_cpu(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
        from grader.reference import ch09_instruction as ch09
        return ch09.custom_collate_fn(batch, pad_token_id, ignore_index, allowed_max_length, device="cpu")

    observed = run_probe(stays_on_cpu, _collate_case("meta"), ProbeContext())
    assert ".to(device)" in observed["error"]["message"]
    from grader.reference import ch09_instruction as ch09
    assert run_probe(ch09.custom_collate_fn, _collate_case("meta"), ProbeContext()) == {}


def test_a_batch_padded_in_place_is_reported_before_the_outputs():
    from gptcourse.checking.judge import judge
    from grader.grading.expectations import expectations

    def pads_in_place(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
        from grader.reference import ch09_instruction as ch09
        longest = max(len(item) for item in batch) + 1
        for item in batch:
            item.extend([pad_token_id] * (longest - len(item)))
        return ch09.custom_collate_fn([item[:-1] for item in batch], pad_token_id, ignore_index,
                                      allowed_max_length, device)

    case = _collate_case("cpu")
    expected, _ = expectations(case)
    message = judge("9.2", case, run_probe(pads_in_place, case, ProbeContext()), expected)
    assert message.startswith("The batch passed in, after the call") and "copies" in message


@pytest.mark.parametrize("entry_input, wrong, words", [
    ("   ", lambda e: "Below is an instruction that describes a task. Write a response that appropriately completes "
                     "the request.\n\n### Instruction:\n" + e["instruction"], ["whitespace", "strip"]),
    ("", lambda e: "Below is an instruction that describes a task. Write a response that appropriately completes "
                   "the request.\n\n### Instruction:\n" + e["instruction"] + "\n\n### Input:\n", ["empty"]),
])
def test_the_prompt_message_names_the_input_rule_and_shows_the_line(entry_input, wrong, words):
    from gptcourse.checking.judge import judge
    from gptcourse.checking.records import Case
    from grader.grading.expectations import expectations

    case = Case("9.1", "format", "a test entry", {"entry": {"instruction": "Say hi.", "input": entry_input,
                                                            "output": "Hi."}})
    expected, _ = expectations(case)
    message = judge("9.1", case, run_probe(wrong, case, ProbeContext()), expected)
    assert all(word in message for word in words), message
    assert "First difference in line 5" in message


def test_a_prompt_that_is_printed_instead_of_returned_is_told_so():
    from gptcourse.checking.records import Case

    case = Case("9.1", "format", "a test entry", {"entry": {"instruction": "Say hi.", "input": "", "output": "Hi."}})
    observed = run_probe(lambda entry: print("a prompt"), case, ProbeContext())
    assert "return the string" in observed["error"]["message"]


@pytest.mark.parametrize("device, base, epochs, subset", [
    ("cpu", "small", 3, None), ("cuda", "small", 12, None), ("cuda", "gpt2", 2, None), ("cpu", "gpt2", 1, 40),
])
def test_the_instruction_run_depends_on_the_base_model_and_the_device(monkeypatch, device, base, epochs, subset):
    from gptcourse.instruct import pick_instruction_run
    from gptcourse.pretrain import QUICK_ENV_VAR

    from fake_gpus import pretend_gpu

    monkeypatch.delenv(QUICK_ENV_VAR, raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    pretend_gpu(monkeypatch, "T4")  # used only when device is "cuda"
    run = pick_instruction_run(device, base)
    assert (run.num_epochs, run.train_batches) == (epochs, subset)
    assert run.initial_lr() < run.peak_lr and run.min_lr < run.peak_lr
    assert ("shortened" in run.describe()) == (subset is not None)


def test_a_quick_run_fine_tunes_ten_batches_and_answers_five_entries(monkeypatch):
    from gptcourse.instruct import pick_instruction_run
    from gptcourse.pretrain import QUICK_ENV_VAR

    monkeypatch.setenv(QUICK_ENV_VAR, "1")
    run = pick_instruction_run(torch.device("cpu"), "small")
    assert (run.num_epochs, run.train_batches, run.test_responses) == (1, 10, 5)
    assert "quick run" in run.describe()


# ------------------------------------------------------------------------------------------
# The book's values, computed by the reference package (grader/reference)
# ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def instruction_data():
    import json

    from gptcourse.data import fetch
    with open(fetch("instruction-data"), encoding="utf-8") as file:
        return json.load(file)


def test_the_instruction_data_has_1100_entries_split_935_110_55(instruction_data):
    assert len(instruction_data) == 1_100
    train_portion, test_portion = int(1_100 * 0.85), int(1_100 * 0.05)
    assert (train_portion, 1_100 - train_portion - test_portion, test_portion) == (935, 110, 55)
    assert sum(1 for entry in instruction_data if entry["input"]) == 325


def test_format_input_gives_the_book_s_two_examples(instruction_data):
    from grader.reference import ch09_instruction as ch09
    preamble = ("Below is an instruction that describes a task. Write a response that appropriately completes "
                "the request.")
    assert ch09.format_input(instruction_data[50]) == (
        f"{preamble}\n\n### Instruction:\nIdentify the correct spelling of the following word.\n\n"
        f"### Input:\nOcassion")
    assert ch09.format_input(instruction_data[999]) == (
        f"{preamble}\n\n### Instruction:\nWhat is an antonym of 'complicated'?")


def test_the_collate_function_gives_the_book_s_toy_batch():
    from grader.reference import ch09_instruction as ch09
    batch = [[0, 1, 2, 3, 4], [5, 6], [7, 8, 9]]
    inputs, targets = ch09.custom_collate_fn(batch)
    assert inputs.tolist() == [[0, 1, 2, 3, 4], [5, 6, 50256, 50256, 50256], [7, 8, 9, 50256, 50256]]
    assert targets.tolist() == [[1, 2, 3, 4, 50256], [6, 50256, -100, -100, -100], [8, 9, 50256, -100, -100]]
    assert inputs.dtype == targets.dtype == torch.long
    assert batch == [[0, 1, 2, 3, 4], [5, 6], [7, 8, 9]]  # the lists are left as they were
    inputs, targets = ch09.custom_collate_fn(batch, allowed_max_length=3)
    assert inputs.tolist() == [[0, 1, 2], [5, 6, 50256], [7, 8, 9]]
    assert targets.tolist() == [[1, 2, 3], [6, 50256, -100], [8, 9, 50256]]


def test_cross_entropy_skips_targets_of_minus_100_as_the_book_shows():
    logits = torch.tensor([[-1.0, 1.0], [-0.5, 1.5], [-0.5, 1.5]])
    two = torch.nn.functional.cross_entropy(logits[:2], torch.tensor([0, 1]))
    three = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 1]))
    ignored = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, -100]))
    assert round(two.item(), 4) == 1.1269 and round(three.item(), 4) == 0.7936
    assert ignored.item() == two.item()
