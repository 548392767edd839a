"""The chat panel (gptcourse.chat): answers streamed through the student's own generate, the
same seed and settings giving the same answer, Stop within one token, the one-line message for
an unfinished task, "why this token", the key-value cache path, and the widgets themselves
(without a browser: ipywidgets objects in this process)."""
import copy

import pytest
import torch

from gptcourse import get_encoding
from gptcourse.chat import ChatPanel, Conversation, Settings, transcript
from gptcourse.kvcache import add_kv_cache
from grader.reference.ch04_gpt_model import GPTModel
from grader.reference.ch06_sampling import (KVCacheMultiHeadAttention, generate, softmax_with_temperature,
                                            top_k_logits, top_p_logits)

CFG = {"vocab_size": 50257, "context_length": 32, "emb_dim": 16, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
       "qkv_bias": False}
FUNCTIONS = {"generate": generate, "softmax_with_temperature": softmax_with_temperature,
             "top_k_logits": top_k_logits, "top_p_logits": top_p_logits}
PROMPT = "Every effort moves you"


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return GPTModel(CFG).eval()


@pytest.fixture(scope="module")
def tokenizer():
    return get_encoding()


def conversation(model, tokenizer, **options):
    return Conversation("the small model", model, tokenizer, FUNCTIONS, CFG["context_length"], **options)


def test_the_stream_is_what_the_student_s_generate_gives(model, tokenizer):
    settings = Settings(temperature=1.2, top_k=50, top_p=0.9, max_new_tokens=12, seed=7)
    answer = conversation(model, tokenizer).answer(PROMPT, settings)
    torch.manual_seed(7)
    idx = torch.tensor([tokenizer.encode(PROMPT)])
    whole = generate(model, idx, 12, CFG["context_length"], temperature=1.2, top_k=50, top_p=0.9)
    assert answer.token_ids == whole[0, idx.shape[1]:].tolist()
    assert answer.text == tokenizer.decode(answer.token_ids) and len(answer.pieces) == 12


def test_the_same_seed_and_settings_give_the_same_answer(model, tokenizer):
    chat = conversation(model, tokenizer)
    settings = Settings(temperature=1.0, top_k=None, top_p=None, max_new_tokens=10, seed=3)
    first, again = chat.answer(PROMPT, settings), chat.answer(PROMPT, settings)
    other = chat.answer(PROMPT, Settings(temperature=1.0, top_k=None, top_p=None, max_new_tokens=10, seed=4))
    assert first.token_ids == again.token_ids
    assert other.token_ids != first.token_ids  # 10 draws from an untrained model's near-uniform choice
    assert "seed 3" in first.settings.describe() and "temperature 1" in first.markdown()


def test_stop_ends_the_answer_within_one_token(model, tokenizer):
    seen = []
    answer = conversation(model, tokenizer).answer(PROMPT, Settings(max_new_tokens=20),
                                                    stop=lambda: len(seen) >= 3, on_token=lambda a: seen.append(1))
    assert answer.stopped and len(answer.token_ids) == 3


def test_an_unfinished_generate_gets_the_one_line_message(model, tokenizer):
    def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
        raise NotImplementedError()

    chat = Conversation("the small model", model, tokenizer, {"generate": generate}, CFG["context_length"])
    answer = chat.answer(PROMPT, Settings())
    assert answer.problem == "This cell needs Task 6.4 (generate): finish it above and run its cell first."
    assert answer.token_ids == [] and answer.problem in transcript([answer])


def test_why_this_token_gives_probabilities_before_and_after_the_filters(model, tokenizer):
    chat = conversation(model, tokenizer)
    answer = chat.answer(PROMPT, Settings(temperature=0.7, top_k=3, top_p=None, max_new_tokens=4))
    rows = chat.why(answer)
    assert rows[-1][0] == "others" and len(rows) == 9
    assert sum(r[1] for r in rows) == pytest.approx(1.0, abs=1e-5)
    assert sum(r[2] for r in rows) == pytest.approx(1.0, abs=1e-5)
    assert sum(1 for r in rows[:-1] if r[2] > 0) <= 3  # top-k 3 leaves three candidates at most
    greedy = chat.answer(PROMPT, Settings(temperature=0.0, max_new_tokens=4))
    after = [r[2] for r in chat.why(greedy)]
    assert after[0] == 1.0 and sum(after) == 1.0  # greedy: everything on the largest logit


def test_the_cached_path_gives_the_same_tokens_faster_than_it_could_without(model, tokenizer):
    cached = add_kv_cache(copy.deepcopy(model), CFG, KVCacheMultiHeadAttention).eval()
    plain = conversation(model, tokenizer)
    with_cache = conversation(model, tokenizer, cached_model=cached)
    for settings in (Settings(temperature=0.0, max_new_tokens=8), Settings(temperature=1.0, max_new_tokens=8, seed=5)):
        assert with_cache.answer(PROMPT, settings).token_ids == plain.answer(PROMPT, settings).token_ids
    # The cache cannot crop: the answer stops at the context length.
    long = with_cache.answer(PROMPT, Settings(temperature=0.0, max_new_tokens=100))
    assert len(tokenizer.encode(PROMPT)) + len(long.token_ids) == CFG["context_length"]


def test_the_panel_streams_into_its_columns_and_saves_a_transcript(model, tokenizer, tmp_path):
    other = copy.deepcopy(model)
    panel = ChatPanel({"first": model, "second": other}, tokenizer, FUNCTIONS,
                      settings=Settings(temperature=0.0, max_new_tokens=6))
    shown = []
    panel.columns[0].answer.observe(lambda change: shown.append(change["new"]), names="value")
    panel.ask(PROMPT, wait=True)
    assert [a.model for a in panel.answers] == ["first", "second"]
    assert len({value for value in shown if value.startswith(PROMPT)}) >= 4  # the prompt, then token by token
    assert panel.columns[0].answer.value == PROMPT + panel.answers[0].text
    assert "temperature 0" in panel.columns[0].used.value and "tokens/s" in panel.columns[0].used.value
    path = panel.save(str(tmp_path / "chat.md"))
    saved = open(path, encoding="utf-8").read()
    assert saved.startswith("# Chat transcript") and saved.count(PROMPT) == 2
    panel.clear()
    assert panel.answers == [] and panel.columns[1].answer.value == ""


def test_stop_pressed_while_the_panel_answers(model, tokenizer):
    panel = ChatPanel({"slow": model}, tokenizer, FUNCTIONS, settings=Settings(temperature=1.0, max_new_tokens=200))
    tokens = []

    def stop_after_two(answer):
        tokens.append(len(answer.token_ids))
        if len(tokens) == 2:
            panel.stop()

    panel.columns[0].show = stop_after_two
    panel.ask(PROMPT, wait=True)
    assert panel.answers[0].stopped and len(panel.answers[0].token_ids) == 2


def test_a_prompt_template_is_what_the_model_is_given(model, tokenizer):
    def as_instruction(prompt):
        return f"### Instruction:\n{prompt}\n\n### Response:\n"

    chat = conversation(model, tokenizer, prompt_template=as_instruction)
    answer = chat.answer("Name a colour.", Settings(temperature=0.0, max_new_tokens=5))
    idx = torch.tensor([tokenizer.encode(as_instruction("Name a colour."))])
    whole = generate(model, idx, 5, CFG["context_length"])
    assert answer.token_ids == whole[0, idx.shape[1]:].tolist() and answer.prompt == "Name a colour."
