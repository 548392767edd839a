"""Chapter 07's grading where a correct student writes something the probes must not trip on, and
the reference package against the book's values for chapter 07."""
import pytest
import torch

from gptcourse import SelfCheckFailed, check
from gptcourse.checking.tasks import tasks_of
from grader.reference import ch04_gpt_model as ch04


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
    assert "✔ Task 7.5 (classify_text): all" in capsys.readouterr().out


def test_classify_text_that_never_runs_the_model_is_told_so():
    def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
        return "spam" if "win" in text.lower() else "not spam"

    with pytest.raises(SelfCheckFailed, match="never called the model"):
        check("7.5", classify_text)


@pytest.mark.parametrize("task_id", [task.id for task in tasks_of("07_classification")])
def test_hidden_cases_can_be_drawn_for_many_seeds(task_id):
    # Cases are redrawn until they tell mistakes apart (7.4: the first token's predictions must
    # score differently); a seed for which that never happens would leave a whole class ungraded.
    from grader.chapters import hidden_cases
    from grader.grading.expectations import expectations

    for seed in (4242, *range(12)):
        for case in hidden_cases(task_id, seed):
            expected, _ = expectations(case)  # raises when the reference fails on the case
            assert "error" not in expected


# ------------------------------------------------------------------------------------------
# The book's values, computed by the reference package (grader/reference)
# ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sms_spam():
    """The SMS Spam Collection as the chapter 07 notebook reads it (quotes are plain characters)."""
    import csv

    import pandas as pd

    from gptcourse.data import fetch
    return pd.read_csv(fetch("sms-spam"), sep="\t", header=None, names=["Label", "Text"], quoting=csv.QUOTE_NONE)


def test_the_sms_collection_has_5574_messages_and_default_quoting_merges_three_of_them(sms_spam):
    import pandas as pd

    from gptcourse.data import fetch
    assert len(sms_spam) == 5_574
    assert sms_spam["Label"].value_counts().to_dict() == {"ham": 4_827, "spam": 747}
    default = pd.read_csv(fetch("sms-spam"), sep="\t", header=None, names=["Label", "Text"])
    assert len(default) == 5_572  # the book's count: one unclosed quote swallows the next two lines


def test_balancing_and_the_70_10_20_split_give_747_747_and_1045_149_300(sms_spam):
    from grader.reference import ch07_classification as ch07
    balanced = ch07.create_balanced_dataset(sms_spam)
    assert balanced["Label"].value_counts().to_dict() == {"ham": 747, "spam": 747}
    assert len(sms_spam) == 5_574  # the input is left as it was
    train, validation, test = ch07.random_split(balanced, 0.7, 0.1)
    assert (len(train), len(validation), len(test)) == (1_045, 149, 300)
    together = pd_rows(train) + pd_rows(validation) + pd_rows(test)
    assert sorted(together) == sorted(pd_rows(balanced))  # every row exactly once


def pd_rows(df):
    return list(df[["Label", "Text"]].itertuples(index=False, name=None))


def test_the_longest_training_message_has_120_tokens_and_classify_text_crops_to_the_context(tmp_path, sms_spam):
    from gptcourse import get_encoding
    from gptcourse.checking.chapters.toys import ToyClassifier
    from grader.reference import ch07_classification as ch07
    balanced = ch07.create_balanced_dataset(sms_spam)
    balanced["Label"] = balanced["Label"].map({"ham": 0, "spam": 1})
    train, _, _ = ch07.random_split(balanced, 0.7, 0.1)
    train.to_csv(tmp_path / "train.csv", index=None)
    tokenizer = get_encoding()
    dataset = ch07.SpamDataset(tmp_path / "train.csv", tokenizer)
    assert len(dataset) == 1_045 and dataset[0][0].shape == (120,) and dataset[0][0].dtype == torch.long
    model = ToyClassifier(context_length=16, emb_dim=4, num_classes=2)
    seen = []
    model.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
    assert ch07.classify_text("a short one", model, tokenizer, "cpu", max_length=120) in ("spam", "not spam")
    assert seen[-1].shape == (1, 16) and seen[-1][0, -1].item() == 50256  # cropped to 16, padded at the end


def test_the_classification_head_leaves_the_head_the_last_block_and_the_final_norm_trainable():
    from grader.reference import ch07_classification as ch07
    cfg = dict(ch04.GPT_CONFIG_124M, context_length=16, emb_dim=8, n_heads=2, n_layers=3, vocab_size=50)
    model = ch04.GPTModel(cfg)
    ch07.add_classification_head(model, num_classes=2, emb_dim=8)
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable == {name for name, _ in model.named_parameters()
                         if name.startswith(("out_head.", "trf_blocks.2.", "final_norm."))}
    assert model.out_head.weight.shape == (2, 8) and model.out_head.bias is not None
