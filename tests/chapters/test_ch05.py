"""Chapter 05 (pretraining): the reference package against the book's values."""
import numpy as np
import pytest
import torch

from book import count_parameters
from gpt2_standin import hf_gpt2_logits
from grader.chapters import hidden_cases
from grader.reference import ch01_text_data as ch01
from grader.reference import ch04_gpt_model as ch04
from grader.reference import ch05_pretraining as ch05


@pytest.fixture(scope="module")
def untrained_gpt2_256():
    """GPT-2 small with context 256 (the chapter's GPT_CONFIG_124M) and the book's seed, in eval mode."""
    torch.manual_seed(123)
    model = ch04.GPTModel(ch05.GPT_CONFIG_124M)
    model.eval()
    return model


def test_text_to_token_ids_and_back_match_the_spec():
    tokenizer = ch01.get_encoding()
    text = "Hello, do you like tea? <|endoftext|> In the sunlit terraces"
    ids = ch05.text_to_token_ids(text, tokenizer)
    assert ids.tolist() == [[15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114]]
    assert ch05.token_ids_to_text(ids, tokenizer) == text


def test_the_empty_text_gives_int64_ids_and_no_case_asks_for_it():
    """The task text promises int64 ids; torch.tensor([]) alone would be float32. No case encodes
    the empty text: the book's torch.tensor(ids) gives float32 there, and the contract says nothing of it."""
    ids = ch05.text_to_token_ids("", ch01.get_encoding())
    assert ids.dtype == torch.int64 and tuple(ids.shape) == (1, 0)
    cases = [case for seed in range(20) for case in hidden_cases("5.1", seed)]  # the public ones too
    assert all(case.args["text"] for case in cases if case.kind == "encode")


def test_the_untrained_model_s_cross_entropy_and_perplexity_match_the_book(untrained_gpt2_256):
    inputs = torch.tensor([[16833, 3626, 6100], [40, 1107, 588]])  # "every effort moves", "I really like"
    targets = torch.tensor([[3626, 6100, 345], [1107, 588, 11311]])  # " effort moves you", " really like chocolate"
    loss = ch05.calc_loss_batch(inputs, targets, untrained_gpt2_256, "cpu")
    assert round(loss.item(), 4) == 10.7940
    assert round(torch.exp(loss).item()) == pytest.approx(48726, abs=2)  # perplexity
    # close to a uniform guess over the vocabulary, ln(50257) = 10.82
    assert abs(loss.item() - torch.log(torch.tensor(50257.0)).item()) < 0.1


def test_the_untrained_validation_loss_on_the_verdict_is_about_10_99(verdict_text, untrained_gpt2_256):
    split = int(0.9 * len(verdict_text))
    val_loader = ch01.create_dataloader_v1(verdict_text[split:], batch_size=2, max_length=256, stride=256,
                                           drop_last=False, shuffle=False)
    with torch.no_grad():
        val_loss = ch05.calc_loss_loader(val_loader, untrained_gpt2_256, "cpu")
    assert val_loss == pytest.approx(10.98, abs=0.02)  # the book: 10.981


def test_calc_loss_loader_edge_cases():
    from gptcourse.checking.chapters.toys import TinyLanguageModel
    model = TinyLanguageModel(11, 6, 4)
    ids = torch.randint(0, 11, (5, 6))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(ids, ids.roll(-1, 1)), batch_size=2)
    with torch.no_grad():
        losses = [ch05.calc_loss_batch(x, y, model, "cpu").item() for x, y in loader]
        assert ch05.calc_loss_loader(loader, model, "cpu") == pytest.approx(sum(losses) / 3)
        assert ch05.calc_loss_loader(loader, model, "cpu", num_batches=2) == pytest.approx(sum(losses[:2]) / 2)
        assert ch05.calc_loss_loader(loader, model, "cpu", num_batches=99) == pytest.approx(sum(losses) / 3)
    empty = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(ids[:0], ids[:0]), batch_size=2)
    assert torch.isnan(torch.tensor(ch05.calc_loss_loader(empty, model, "cpu")))


def test_the_learning_rate_warms_up_linearly_then_follows_a_cosine_down_to_min_lr():
    total, warmup, peak, initial, low = 100, 10, 1e-2, 1e-4, 1e-5
    rates = [ch05.lr_at_step(step, total, warmup, peak, initial, low) for step in range(total)]
    assert rates[0] == initial and rates[warmup] == pytest.approx(peak)
    steps_up = np.diff(rates[:warmup + 1])
    assert np.allclose(steps_up, (peak - initial) / warmup)  # equal steps up
    assert all(a > b for a, b in zip(rates[warmup:], rates[warmup + 1:]))  # then only down
    middle = warmup + (total - warmup) // 2
    assert rates[middle] == pytest.approx((peak + low) / 2)  # half way down at half the decay
    assert low < rates[-1] < low + 1e-3 * (peak - low)  # the last step is just above min_lr


@pytest.mark.parametrize("n_layers, emb_dim, n_heads", [(1, 8, 2), (3, 12, 3)])
def test_loaded_weights_compute_what_gpt2_computes(tmp_path, n_layers, emb_dim, n_heads):
    """A small GPT-2 checkpoint, through a safetensors file, into GPTModel: the logits of the
    Hugging Face layout's own forward pass."""
    from gptcourse.gpt2_weights import read_safetensors, write_safetensors
    from grader.chapters.ch05_pretraining import hf_gpt2_state_dict

    cfg = dict(ch04.GPT_CONFIG_124M, vocab_size=40, context_length=9, emb_dim=emb_dim, n_heads=n_heads,
               n_layers=n_layers, drop_rate=0.0, qkv_bias=True)
    sd = {k: torch.tensor(v, dtype=torch.float32) for k, v in hf_gpt2_state_dict(np.random.default_rng(5), cfg).items()}
    write_safetensors(sd, tmp_path / "small.safetensors")
    loaded = read_safetensors(tmp_path / "small.safetensors")
    model = ch04.GPTModel(cfg).eval()
    ch05.load_weights_into_gpt(model, loaded)
    idx = torch.randint(0, 40, (2, 7))
    with torch.no_grad():
        assert torch.allclose(model(idx), hf_gpt2_logits(sd, cfg, idx), atol=1e-4)
    assert torch.equal(model.out_head.weight, sd["wte.weight"])  # tied
    bad = dict(loaded, **{"h.0.mlp.c_fc.weight": torch.zeros(emb_dim, 3 * emb_dim)})
    with pytest.raises(ValueError, match=r"h\.0\.mlp\.c_fc\.weight"):
        ch05.load_weights_into_gpt(ch04.GPTModel(cfg), bad)


def test_the_gpt2_124m_configuration_has_gpt2_s_parameter_count():
    from gptcourse.gpt2_weights import GPT2_124M_CONFIG

    with torch.device("meta"):
        model = ch04.GPTModel(GPT2_124M_CONFIG)
    # 124,439,808 with the output head tied to the token embedding, as OpenAI's checkpoint has it
    assert count_parameters(model) - model.out_head.weight.numel() == 124_439_808


# ------------------------------------------------------------------------------------------
# The training loops' known mistakes come from the reference loop, not from hand copies of it
# ------------------------------------------------------------------------------------------

LOOPS = ("train_model_simple", "train_model")


def test_the_grader_s_chapter_module_writes_no_training_loop_of_its_own():
    """Its known mistakes of 5.4 and 5.7 are the reference loop with a line changed: a copy of the
    loop here could drift from the master's."""
    import ast
    import inspect

    from grader.chapters import ch05_pretraining as graders

    defined = {node.name for node in ast.walk(ast.parse(inspect.getsource(graders)))
               if isinstance(node, ast.FunctionDef)}
    assert not defined & set(LOOPS), defined & set(LOOPS)
    loops = [obj for task in ("5.4", "5.7") for _, obj in graders.SPECS[task].mistakes()]
    loops = [obj.get("train_model") if isinstance(obj, dict) else obj for obj in loops]
    # The mistakes of 5.7's schedule keep the reference loop; the others change it.
    made = [loop for loop in loops if getattr(loop, "__name__", None) in LOOPS and loop is not getattr(ch05, loop.__name__)]
    assert len(made) == 6, made  # 3 of 5.4, 3 of 5.7
    for loop in made:
        assert loop.__code__.co_filename.startswith(f"<the reference {loop.__name__} with "), loop.__code__.co_filename


def test_a_known_mistake_is_the_reference_with_its_text_replaced():
    from grader.chapters.casekit import reference_with_text_replaced

    from gptcourse.tokenizer import get_encoding

    no_batch = reference_with_text_replaced("5.1", "text_to_token_ids", {".unsqueeze(0)": ""})
    tokenizer = get_encoding()
    assert ch05.text_to_token_ids("Every effort", tokenizer).shape == (1, 2)
    assert no_batch("Every effort", tokenizer).shape == (2,)
    with pytest.raises(ValueError, match="its master changed"):
        reference_with_text_replaced("5.7", "train_model", {"a line the loop does not have": "pass"})
