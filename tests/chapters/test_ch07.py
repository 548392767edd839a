"""Chapter 07's grading where a correct student writes something the probes must not trip on."""
import pytest
import torch

from gptcourse import SelfCheckFailed, check


def classify_text_calling_forward(text, model, tokenizer, device, max_length, pad_token_id=50256):
    # model.forward(x) instead of model(x): unusual, but it runs the same code.
    model.eval()
    length = min(max_length, model.pos_emb.weight.shape[0])
    ids = tokenizer.encode(text)[:length]
    ids = ids + [pad_token_id] * (length - len(ids))
    with torch.no_grad():
        logits = model.forward(torch.tensor([ids], device=device))
    return "spam" if logits[0, -1].argmax().item() == 1 else "not spam"


def test_classify_text_may_call_model_forward_directly(capsys):
    check("7.5", classify_text_calling_forward)
    assert "self-check cases passed" in capsys.readouterr().out


def test_classify_text_that_never_runs_the_model_is_told_so():
    def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
        return "spam" if "win" in text.lower() else "not spam"

    with pytest.raises(SelfCheckFailed, match="never called the model"):
        check("7.5", classify_text)


@pytest.mark.parametrize("task_id", ["7.1", "7.2", "7.3", "7.4", "7.5"])
def test_hidden_cases_can_be_drawn_for_many_seeds(task_id):
    # Cases are redrawn until they tell mistakes apart (7.4: the first token's predictions must
    # score differently); a seed for which that never happens would leave a whole class ungraded.
    from grader.chapters import hidden_cases
    from grader.hidden.expectations import expectations

    for seed in (4242, *range(12)):
        for case in hidden_cases(task_id, seed):
            expected, _ = expectations(case)  # raises when the reference fails on the case
            assert "error" not in expected
