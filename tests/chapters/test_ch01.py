"""Chapter 01's property hints name the mistake from the observations alone (not from a
case label that happens to contain the right word)."""
import re

from gptcourse.judge import judge
from gptcourse.probes import ProbeContext, run_probe
from gptcourse.records import Case
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
    assert "yours has the token 'paused--then' where the spec's split gives separate tokens" in message


def test_right_tokens_with_other_ids_are_named():
    def build_vocab(text):  # ids from 1
        tokens = sorted({p.strip() for p in re.split(r'([,.:;?_!"()\']|--|\s)', text) if p.strip()})
        return {token: i + 1 for i, token in enumerate(tokens + ["<|endoftext|>", "<|unk|>"])}

    message = verdict("1.2", Case("1.2", "vocab", "a text", {"text": "b a, c."}), build_vocab)
    assert "the right tokens with other ids" in message
