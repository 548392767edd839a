"""How the judge words a failure (gptcourse/checking/judge.py): what failed first, the case last,
and only the causes the observation proves. The corpus's cells check the same on real mistakes
(tests/course/test_selfcheck.py); these cases pin each rule on its own."""
import numpy as np
import torch
import torch.nn as nn

from gptcourse.checking.judge import (_array_difference, _swapped_pair, judge_finding, laid_out,
                                      plain_error_text)
from gptcourse.checking.kinds.base import _describe_call
from gptcourse.checking.records import Case

CASE = Case("2.1", "forward", "6 tokens x 3 features, float32", {}, {}, "float32")


def test_the_first_line_says_what_failed_and_the_case_comes_last():
    problem = ("The returned value: first difference at index 3: yours [0.0001, 0.01337], expected [0.0001, 0.006733] "
               "— the returned learning rates: one per optimizer step")
    message = laid_out("Task 5.7 (lr_at_step / train_model) failed", problem, "6 steps, float64", "cpu")
    lines = message.splitlines()
    assert lines[0] == "Task 5.7 (lr_at_step / train_model) failed: the returned value: first difference at index 3: " \
                       "yours [0.0001, 0.01337], expected [0.0001, 0.006733]"
    assert lines[1] == "The returned learning rates: one per optimizer step"
    assert lines[-1] == "(Checked on 6 steps, float64, on the CPU.)"


def test_a_first_line_too_long_keeps_only_what_failed():
    problem = "AttributeError while calling f(model) at line 5: " + "'x'" * 50 + " — walk the children"
    lines = laid_out("Task 8.3 (replace_linear_with_lora) failed", problem, "a model", "meta").splitlines()
    assert lines[0] == "Task 8.3 (replace_linear_with_lora) failed: AttributeError while calling f(model) at line 5"
    assert lines[1] == "'x'" * 50 and lines[2] == "Walk the children"
    assert lines[-1] == "(Checked on a model, on PyTorch's meta device, standing in for a GPU.)"


def test_names_from_code_keep_their_case():
    lines = laid_out("Task 6.2 (top_k_logits) failed", "The returned logits: wrong — top_k_logits must keep ties",
                     "k=3", "cpu").splitlines()
    assert lines[0].endswith("failed: the returned logits: wrong")
    assert lines[1] == "top_k_logits must keep ties"  # a name, not a sentence's first word


def test_a_small_difference_in_every_value_is_not_called_rounding_noise():
    expected = np.linspace(0.5, 2.0, 12).reshape(3, 4)
    scaled, _ = _array_difference("Output", expected * 1.0002, expected)
    assert "1.0002 times the expected one" in scaled and "not rounding noise" in scaled
    nudged = expected + 3e-4 * np.sin(np.arange(12)).reshape(3, 4) ** 2 + 1e-5
    assert "not rounding noise" in _array_difference("Output", nudged, expected)[0]
    one_place = expected.copy()
    one_place[1, 2] += 1e-3  # a single entry: no claim about a constant
    assert "rounding noise" not in _array_difference("Output", one_place, expected)[0]
    far = expected * 1.5  # a large difference speaks for itself
    assert "rounding noise" not in _array_difference("Output", far, expected)[0]


def test_the_checks_own_model_classes_never_reach_a_message():
    text = plain_error_text("'NestedModel' object has no attribute 'trf_blocks'; see NextTokenModel")
    assert text == "the test model has no attribute 'trf_blocks'; see the test model"
    assert plain_error_text("'GPTModel' object has no attribute 'x'") == "'GPTModel' object has no attribute 'x'"


def test_a_call_shows_a_test_model_as_model_and_tensors_by_shape():
    class Probe:
        inputs = {}

    class Tiny(nn.Module):
        pass

    shown = _describe_call(Probe(), [Tiny(), torch.zeros(2, 3), nn.Linear(2, 2), 3], {"eos_id": 4})
    assert shown == "model, a tensor of shape (2, 3), an nn.Linear, 3, eos_id=4"


def test_two_values_in_each_others_places_are_said_only_when_swapping_them_back_is_exact():
    assert "items 1 and 3" in _swapped_pair([3.0, 2.0, 1.0], [1.0, 2.0, 3.0], "cpu")
    assert _swapped_pair([3.0, 2.0, 1.5], [1.0, 2.0, 3.0], "cpu") == ""
    assert _swapped_pair([1.0, 1.0], [1.0, 1.0], "cpu") == ""


def test_a_known_mistake_is_named_only_when_it_explains_every_wrong_observation():
    expected = {"out": np.ones(3), "weights": np.ones(3)}
    got = {"out": np.full(3, 2.0), "weights": np.full(3, 5.0)}
    explains_out_only = ("the scores are scaled", {"out": np.full(3, 2.0), "weights": np.full(3, 3.0)})
    message, finding = judge_finding("2.1", CASE, got, expected, [explains_out_only])
    assert finding.kind == "wrong result" and "it looks like" not in message
    explains_both = ("the scores are scaled", {"out": np.full(3, 2.0), "weights": np.full(3, 5.0)})
    message, finding = judge_finding("2.1", CASE, got, expected, [explains_both])
    assert finding.kind == "known mistake" and "it looks like the scores are scaled" in message


def test_a_shape_that_holds_the_expected_numbers_another_way_is_said():
    """Wrong wiring seen in the shape alone: pieces stacked where they are joined, two tensors
    joined where they are added; any other wrong shape gets no such sentence."""
    from gptcourse.checking.judge import _joined_another_way

    assert "torch.stack makes a new dimension" in _joined_another_way((2, 6, 2, 2), (2, 6, 4))
    assert "joined with torch.cat where they are to be added" in _joined_another_way((2, 4, 6), (2, 4, 3))
    assert _joined_another_way((2, 4, 5), (2, 4, 3)) == ""
    assert _joined_another_way((4, 2, 6), (2, 4, 6)) == ""


def test_the_student_s_line_of_code_keeps_its_own_letters_and_stays_short():
    """The line that raised is quoted as written ("block = ...", never "Block = ..."), cut to a
    length that says where; sentences still start with a capital."""
    from gptcourse.checking.judge import _capitalised, _shown_line

    assert _capitalised("block = gpt.trf_blocks[b]: index 2 is out of range").startswith("block = ")
    assert _capitalised("idx, x = f(y): too many values").startswith("idx, x = ")
    assert _capitalised("finished |= idx_next == eos_id: a CPU tensor").startswith("finished |= ")
    assert _capitalised("return prompt.format(input=x): 'name'").startswith("return ")
    assert _capitalised("with use_cache=True each chunk must").startswith("With use_cache=True")
    shown = _shown_line("line 9: " + "x = torch.cat((a, b), dim=1) + " * 5)
    assert shown.startswith("line 9: x = torch.cat") and shown.endswith("...") and len(shown) <= len("line 9: ") + 60
    assert _shown_line("line 3: x = y") == "line 3: x = y"
    assert _shown_line("line 5: raise ValueError(f'{n} tokens do not fit')") == "line 5"  # their message follows
