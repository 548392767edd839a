"""Chapter 01's property hints name the mistake from the observations alone (not from a
case label that happens to contain the right word), and the reference package against the book's
values for chapter 01."""
import os
import re
import warnings

import torch

from gptcourse.checking.judge import judge
from gptcourse.checking.probes import ProbeContext, run_probe
from gptcourse.checking.records import Case
from grader.chapters.ch01_text_data import _workers_case
from grader.reference import ch01_text_data as ch01
from grader.reference import reference_object


def verdict(task_id, case, student):
    expected = run_probe(reference_object(task_id), case, ProbeContext())
    return judge(task_id, case, run_probe(student, case, ProbeContext()), expected)


def test_a_token_the_split_should_have_cut_is_named():
    def build_vocab(text):  # the pattern without its '--' alternative
        tokens = sorted({p.strip() for p in re.split(r'([,.:;?_!"()\']|\s)', text) if p.strip()})
        return {token: i for i, token in enumerate(tokens + ["<|endoftext|>", "<|unk|>"])}

    case = Case("1.2", "vocab", "a text", {"text": "She paused--then smiled."})
    message = verdict("1.2", case, build_vocab)
    assert "yours has the token 'paused--then' where the task's split gives separate tokens" in message


def test_right_tokens_with_other_ids_are_named():
    def build_vocab(text):  # ids from 1
        tokens = sorted({p.strip() for p in re.split(r'([,.:;?_!"()\']|--|\s)', text) if p.strip()})
        return {token: i + 1 for i, token in enumerate(tokens + ["<|endoftext|>", "<|unk|>"])}

    message = verdict("1.2", Case("1.2", "vocab", "a text", {"text": "b a, c."}), build_vocab)
    assert "the right tokens with other ids" in message


# ------------------------------------------------------------------------------------------
# The book's values, computed by the reference package (grader/reference)
# ------------------------------------------------------------------------------------------

VERDICT_FIRST_IDS = [40, 367, 2885, 1464, 1807, 3619, 402, 271, 10899, 2138]


def test_the_verdict_vocabulary_and_tokenizer_round_trip(verdict_text):
    assert len(verdict_text) == 20_479
    vocab = ch01.build_vocab(verdict_text)
    assert len(vocab) == 1132
    assert list(vocab)[-2:] == ["<|endoftext|>", "<|unk|>"] and vocab["<|unk|>"] == 1131
    tokenizer = ch01.SimpleTokenizerV2(vocab)
    text = '"It\'s the last he painted, you know," Mrs. Gisburn said with pardonable pride.'
    ids = tokenizer.encode(text)
    assert ids == [1, 56, 2, 850, 988, 602, 533, 746, 5, 1126, 596, 5, 1, 67, 7, 38, 851, 1108, 754, 793, 7]
    assert tokenizer.decode(ids) == '" It\' s the last he painted, you know," Mrs. Gisburn said with pardonable pride.'
    assert tokenizer.decode(tokenizer.encode("Hello, do you like tea?")) == "<|unk|>, do you like tea?"


def test_the_verdict_with_gpt2_tokens_windows_and_first_batch(verdict_text):
    tokenizer = ch01.get_encoding()
    ids = tokenizer.encode(verdict_text)
    assert len(ids) == 5145 and ids[:10] == VERDICT_FIRST_IDS
    assert tokenizer.encode("Hello, do you like tea? <|endoftext|> In the sunlit terraces",
                            allowed_special={"<|endoftext|>"}) == [
        15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114]
    loader = ch01.create_dataloader_v1(verdict_text, batch_size=8, max_length=4, stride=4, shuffle=False)
    inputs, targets = next(iter(loader))
    assert inputs[:2].tolist() == [[40, 367, 2885, 1464], [1807, 3619, 402, 271]]
    assert inputs.dtype == torch.long and inputs.shape == (8, 4)
    assert torch.equal(targets[:, :-1], inputs[:, 1:])
    assert len(loader) == 160  # 1286 windows of 4 (stride 4), batches of 8, the last one dropped


def test_embedding_of_the_first_batch_has_shape_8_4_256(verdict_text):
    loader = ch01.create_dataloader_v1(verdict_text, batch_size=8, max_length=4, stride=4, shuffle=False)
    inputs, _ = next(iter(loader))
    torch.manual_seed(123)
    tok_emb, pos_emb = torch.nn.Embedding(50257, 256), torch.nn.Embedding(4, 256)
    embedded = ch01.embed(inputs, tok_emb, pos_emb)
    assert embedded.shape == (8, 4, 256)
    assert torch.allclose(embedded[3, 2], tok_emb.weight[inputs[3, 2]] + pos_emb.weight[2])


def test_a_loader_with_more_workers_than_cores_is_probed_without_a_warning():
    """torch warns (on stderr) when num_workers is more than the machine's cores, and nbgrader
    scores a check cell that prints a warning as failed: the num_workers case must be silent
    whatever the machine, or the same right loader loses its points on a smaller one."""
    many = (os.cpu_count() or 1) + 2
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        observed = run_probe(ch01.create_dataloader_v1, _workers_case("more workers than cores", many), ProbeContext())
    assert "error" not in observed, observed
    assert not [str(w.message) for w in shown if "DataLoader" in str(w.message)]
