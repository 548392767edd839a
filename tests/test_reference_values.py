"""The reference package against the known values of the book and the issue."""
import numpy as np
import pytest
import torch

from gpt2_standin import hf_gpt2_logits
from gptcourse.data import read_text
from grader.reference import ch01_text_data as ch01
from grader.reference import ch02_attention as ch02
from grader.reference import ch03_multihead_attention as ch03
from grader.reference import ch04_gpt_model as ch04

TOY = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                    [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])


VERDICT_FIRST_IDS = [40, 367, 2885, 1464, 1807, 3619, 402, 271, 10899, 2138]


@pytest.fixture(scope="module")
def verdict():
    return read_text("the-verdict")


def test_the_verdict_vocabulary_and_tokenizer_round_trip(verdict):
    assert len(verdict) == 20_479
    vocab = ch01.build_vocab(verdict)
    assert len(vocab) == 1132
    assert list(vocab)[-2:] == ["<|endoftext|>", "<|unk|>"] and vocab["<|unk|>"] == 1131
    tokenizer = ch01.SimpleTokenizerV2(vocab)
    text = '"It\'s the last he painted, you know," Mrs. Gisburn said with pardonable pride.'
    ids = tokenizer.encode(text)
    assert ids == [1, 56, 2, 850, 988, 602, 533, 746, 5, 1126, 596, 5, 1, 67, 7, 38, 851, 1108, 754, 793, 7]
    assert tokenizer.decode(ids) == '" It\' s the last he painted, you know," Mrs. Gisburn said with pardonable pride.'
    assert tokenizer.decode(tokenizer.encode("Hello, do you like tea?")) == "<|unk|>, do you like tea?"


def test_the_verdict_with_gpt2_tokens_windows_and_first_batch(verdict):
    tokenizer = ch01.get_encoding()
    ids = tokenizer.encode(verdict)
    assert len(ids) == 5145 and ids[:10] == VERDICT_FIRST_IDS
    assert tokenizer.encode("Hello, do you like tea? <|endoftext|> In the sunlit terraces",
                            allowed_special={"<|endoftext|>"}) == [
        15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114]
    loader = ch01.create_dataloader_v1(verdict, batch_size=8, max_length=4, stride=4, shuffle=False)
    inputs, targets = next(iter(loader))
    assert inputs[:2].tolist() == [[40, 367, 2885, 1464], [1807, 3619, 402, 271]]
    assert inputs.dtype == torch.long and inputs.shape == (8, 4)
    assert torch.equal(targets[:, :-1], inputs[:, 1:])
    assert len(loader) == 160  # 1286 windows of 4 (stride 4), batches of 8, the last one dropped


def test_embedding_of_the_first_batch_has_shape_8_4_256(verdict):
    loader = ch01.create_dataloader_v1(verdict, batch_size=8, max_length=4, stride=4, shuffle=False)
    inputs, _ = next(iter(loader))
    torch.manual_seed(123)
    tok_emb, pos_emb = torch.nn.Embedding(50257, 256), torch.nn.Embedding(4, 256)
    embedded = ch01.embed(inputs, tok_emb, pos_emb)
    assert embedded.shape == (8, 4, 256)
    assert torch.allclose(embedded[3, 2], tok_emb.weight[inputs[3, 2]] + pos_emb.weight[2])


def close(actual, expected, atol=1e-4):
    return torch.allclose(torch.as_tensor(actual, dtype=torch.float32), torch.tensor(expected), atol=atol)


def test_journey_scores_weights_and_context():
    query = TOY[1]
    assert close(TOY @ query, [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
    weights, context = ch02.simple_self_attention(TOY)
    assert close(weights[1], [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
    assert close(context[1], [0.4419, 0.6515, 0.5683])


def test_simple_attention_is_batched():
    weights, context = ch02.simple_self_attention(torch.stack([TOY, TOY]))
    assert weights.shape == (2, 6, 6) and context.shape == (2, 6, 3)
    assert close(context[1, 1], [0.4419, 0.6515, 0.5683])


def test_self_attention_v1_seed_123():
    torch.manual_seed(123)
    sa = ch02.SelfAttention_v1(3, 2)
    assert close(TOY[1] @ sa.W_query, [0.4306, 1.4551])
    assert close(sa(TOY)[1], [0.3061, 0.8210])


def test_self_attention_v2_seed_789_causal_weights():
    torch.manual_seed(789)
    sa = ch02.SelfAttention_v2(3, 2)
    scores = sa.W_query(TOY) @ sa.W_key(TOY).T
    weights = ch02.causal_attention_weights(scores, d_k=2)
    assert close(weights[1], [0.5517, 0.4483, 0, 0, 0, 0])
    assert torch.all(weights.triu(diagonal=1) == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(6))


def test_v1_and_v2_agree_with_copied_weights():
    torch.manual_seed(1)
    v1, v2 = ch02.SelfAttention_v1(3, 2), ch02.SelfAttention_v2(3, 2)
    for name in ("W_query", "W_key", "W_value"):
        getattr(v1, name).data = getattr(v2, name).weight.data.T
    assert torch.allclose(v1(TOY), v2(TOY), atol=1e-6)


def test_causal_attention_shapes_mask_and_shorter_input():
    torch.manual_seed(0)
    ca = ch02.CausalAttention(3, 2, context_length=8, dropout=0.0)
    assert "mask" in dict(ca.named_buffers())
    assert torch.equal(ca.mask.bool(), torch.triu(torch.ones(8, 8, dtype=torch.bool), 1))
    out = ca(torch.stack([TOY, TOY]))
    assert out.shape == (2, 6, 2)
    # Causality: changing the last token leaves every earlier output unchanged.
    changed = TOY.clone()
    changed[-1] = torch.tensor([9.0, -9.0, 9.0])
    assert torch.allclose(ca(changed[None])[0, :5], out[0, :5])


@pytest.mark.parametrize("num_heads", [1, 2, 4])
def test_multi_head_attention_shapes_and_params(num_heads):
    torch.manual_seed(0)
    batch = torch.stack([TOY, TOY])
    wrapper = ch03.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads)
    assert wrapper(batch).shape == (2, 6, 2 * num_heads)
    mha = ch03.MultiHeadAttention(3, 4, 6, 0.0, num_heads)
    assert mha(batch).shape == (2, 6, 4)
    assert mha.out_proj.weight.shape == (4, 4)


def test_multi_head_attention_rejects_indivisible_width():
    with pytest.raises(ValueError):
        ch03.MultiHeadAttention(3, 5, 6, 0.0, 2)


def test_one_head_mha_equals_causal_attention_plus_projection():
    torch.manual_seed(3)
    mha = ch03.MultiHeadAttention(3, 4, 6, 0.0, 1)
    ca = ch02.CausalAttention(3, 4, 6, 0.0)
    ca.load_state_dict({k: v for k, v in mha.state_dict().items() if not k.startswith("out_proj")})
    x = torch.stack([TOY, TOY])
    assert torch.allclose(mha(x), mha.out_proj(ca(x)), atol=1e-6)


# ------------------------------------------------------------------------------------------
# Chapter 04: the book's numbers for GPT-2 small (GPT_CONFIG_124M)
# ------------------------------------------------------------------------------------------

def count_parameters(model):
    return sum(p.numel() for p in model.parameters())


def test_gpt2_small_has_163_million_parameters_124_million_with_weight_tying():
    with torch.device("meta"):  # shapes only: nothing is allocated
        model = ch04.GPTModel(ch04.GPT_CONFIG_124M)
    total = count_parameters(model)
    assert total == 163_009_536
    assert total - model.out_head.weight.numel() == 124_412_160
    assert round(total * 4 / 1024**2, 2) == 621.83  # float32 MB
    assert count_parameters(model.trf_blocks[0].att) == 2_360_064
    assert count_parameters(model.trf_blocks[0].ff) == 4_722_432


@pytest.mark.parametrize("emb_dim, n_layers, n_heads, total", [
    (1024, 24, 16, 406_212_608), (1280, 36, 20, 838_220_800), (1600, 48, 25, 1_637_792_000)])
def test_larger_gpt2_configurations_counted_on_meta(emb_dim, n_layers, n_heads, total):
    cfg = dict(ch04.GPT_CONFIG_124M, emb_dim=emb_dim, n_layers=n_layers, n_heads=n_heads)
    with torch.device("meta"):
        assert count_parameters(ch04.GPTModel(cfg)) == total


def test_layer_norm_gives_mean_0_and_variance_1_and_gelu_is_the_tanh_form():
    torch.manual_seed(123)
    x = torch.randn(2, 5) * 3 + 1
    out = ch04.LayerNorm(5)(x)
    assert torch.allclose(out.mean(-1), torch.zeros(2), atol=1e-6)
    assert torch.allclose(out.var(-1, unbiased=False), torch.ones(2), atol=1e-4)
    grid = torch.linspace(-4, 4, 81, dtype=torch.float64)
    assert torch.allclose(ch04.GELU()(grid), torch.nn.functional.gelu(grid, approximate="tanh"), atol=1e-12)
    assert not torch.allclose(ch04.GELU()(grid), torch.nn.functional.gelu(grid), atol=1e-5)  # not erf
    assert ch04.FeedForward(dict(ch04.GPT_CONFIG_124M, emb_dim=6))(torch.rand(2, 3, 6)).shape == (2, 3, 6)


@pytest.fixture(scope="module")
def untrained_gpt2():
    """GPT-2 small with the book's seed, and its logits on the book's batch, taken right after
    creation (in train mode, as the book prints them): (model, batch, logits)."""
    tokenizer = ch01.get_encoding()
    batch = torch.tensor([tokenizer.encode("Every effort moves you"), tokenizer.encode("Every day holds a")])
    torch.manual_seed(123)
    model = ch04.GPTModel(ch04.GPT_CONFIG_124M)
    with torch.no_grad():
        logits = model(batch)
    model.eval()
    return model, batch, logits


def test_untrained_gpt2_logits_and_greedy_text_match_the_book(untrained_gpt2):
    model, batch, logits = untrained_gpt2
    assert logits.shape == (2, 4, 50257)
    assert close(logits[0, 0, :3], [0.3613, 0.4222, -0.0711])
    tokenizer = ch01.get_encoding()
    start = torch.tensor([tokenizer.encode("Hello, I am")])
    out = ch04.generate_text_simple(model, start, max_new_tokens=6,
                                    context_size=ch04.GPT_CONFIG_124M["context_length"])
    assert out.tolist() == [[15496, 11, 314, 716, 27018, 24086, 47843, 30961, 42348, 7267]]
    assert tokenizer.decode(out[0].tolist()) == "Hello, I am Featureiman Byeswickattribute argue"
    assert torch.equal(start, torch.tensor([[15496, 11, 314, 716]]))  # the input is left alone


# ------------------------------------------------------------------------------------------
# Chapter 05: pretraining
# ------------------------------------------------------------------------------------------

from grader.reference import ch05_pretraining as ch05  # noqa: E402  (the chapter's section)


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


def test_the_untrained_model_s_cross_entropy_and_perplexity_match_the_book(untrained_gpt2_256):
    inputs = torch.tensor([[16833, 3626, 6100], [40, 1107, 588]])  # "every effort moves", "I really like"
    targets = torch.tensor([[3626, 6100, 345], [1107, 588, 11311]])  # " effort moves you", " really like chocolate"
    loss = ch05.calc_loss_batch(inputs, targets, untrained_gpt2_256, "cpu")
    assert round(loss.item(), 4) == 10.7940
    assert round(torch.exp(loss).item()) == pytest.approx(48726, abs=2)  # perplexity
    # close to a uniform guess over the vocabulary, ln(50257) = 10.82
    assert abs(loss.item() - torch.log(torch.tensor(50257.0)).item()) < 0.1


def test_the_untrained_validation_loss_on_the_verdict_is_about_10_99(verdict, untrained_gpt2_256):
    split = int(0.9 * len(verdict))
    val_loader = ch01.create_dataloader_v1(verdict[split:], batch_size=2, max_length=256, stride=256,
                                           drop_last=False, shuffle=False)
    with torch.no_grad():
        val_loss = ch05.calc_loss_loader(val_loader, untrained_gpt2_256, "cpu")
    assert val_loss == pytest.approx(10.98, abs=0.02)  # the book: 10.981


def test_calc_loss_loader_edge_cases():
    from gptcourse.chapters.toys import TinyLanguageModel
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
# Chapter 06: decoding and sampling
# ------------------------------------------------------------------------------------------

# The book's next-token logits over "closer", "every", "effort", "forward", "inches", "moves",
# "pizza", "toward", "you".
BOOK_NEXT_TOKEN_LOGITS = [4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79]


def test_greedy_and_sampled_next_tokens_of_the_book_toy_vocabulary():
    from grader.reference.ch06_sampling import softmax_with_temperature

    probas = softmax_with_temperature(torch.tensor(BOOK_NEXT_TOKEN_LOGITS), 1.0)
    assert int(torch.argmax(probas)) == 3  # "forward"
    torch.manual_seed(123)
    samples = [torch.multinomial(probas, num_samples=1).item() for _ in range(1000)]
    # The book: 73 x closer, 582 x forward, 2 x inches, 343 x toward, nothing else.
    assert torch.bincount(torch.tensor(samples), minlength=9).tolist() == [73, 0, 0, 582, 2, 0, 0, 343, 0]
    # At temperature 5 "pizza" gets about 4 % (the book: 4.3 %); at 0.1 "forward" about 99 %.
    assert softmax_with_temperature(torch.tensor(BOOK_NEXT_TOKEN_LOGITS), 5.0)[6].item() == pytest.approx(0.043, abs=5e-4)
    assert softmax_with_temperature(torch.tensor(BOOK_NEXT_TOKEN_LOGITS), 0.1)[3].item() == pytest.approx(0.991, abs=5e-4)


def test_top_k_of_the_book_toy_vocabulary():
    from grader.reference.ch06_sampling import softmax_with_temperature, top_k_logits

    kept = top_k_logits(torch.tensor(BOOK_NEXT_TOKEN_LOGITS), 3)
    assert torch.isfinite(kept).nonzero().flatten().tolist() == [0, 3, 7]  # closer, forward, toward
    probas = softmax_with_temperature(kept, 1.0)
    # The book: tensor([0.0615, 0.0000, 0.0000, 0.5775, 0.0000, 0.0000, 0.0000, 0.3610, 0.0000])
    assert probas[[0, 3, 7]].tolist() == pytest.approx([0.0615, 0.5775, 0.3610], abs=5e-5)
    ties = top_k_logits(torch.tensor([[1.0, 3.0, 3.0, 2.0]]), 1)
    assert torch.isfinite(ties).tolist() == [[False, True, True, False]]  # ties at the k-th value stay


def test_top_p_keeps_the_smallest_set_that_reaches_p():
    from grader.reference.ch06_sampling import top_p_logits

    logits = torch.log(torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64))
    kept = lambda p: torch.isfinite(top_p_logits(logits, p)).tolist()  # noqa: E731
    assert kept(0.4) == [False, True, False]  # 0.5 alone reaches 0.4
    assert kept(0.6) == [False, True, True]  # 0.5 + 0.3
    assert kept(0.9) == [True, True, True]
    assert kept(1e-6) == [False, True, False]  # at least one token


def test_the_kv_cache_gives_the_outputs_and_ids_of_the_whole_sequence():
    from gptcourse.kvcache import add_kv_cache, generate_greedy_cached
    from grader.reference.ch03_multihead_attention import MultiHeadAttention
    from grader.reference.ch04_gpt_model import GPTModel
    from grader.reference.ch06_sampling import KVCacheMultiHeadAttention, generate

    torch.manual_seed(0)
    cached = KVCacheMultiHeadAttention(6, 8, 10, 0.0, 2).double().eval()
    plain = MultiHeadAttention(6, 8, 10, 0.0, 2).double().eval()
    plain.load_state_dict(cached.state_dict())
    x = torch.randn(2, 9, 6, dtype=torch.float64)
    with torch.no_grad():
        whole = plain(x)
        assert torch.allclose(cached(x), whole)
        chunks = [cached(x[:, a:b], use_cache=True) for a, b in ((0, 1), (1, 4), (4, 5), (5, 9))]
    assert torch.allclose(torch.cat(chunks, dim=1), whole, atol=1e-12)
    assert tuple(cached.cache_k.shape) == (2, 2, 9, 4)
    with pytest.raises(ValueError, match="context_length"):
        cached(x[:, :2], use_cache=True)
    cached.reset_cache()
    assert cached.cache_k is None and cached.cache_v is None

    cfg = {"vocab_size": 50, "context_length": 24, "emb_dim": 16, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
           "qkv_bias": False}
    model = GPTModel(cfg).eval()
    prompt = torch.randint(0, 50, (2, 4))
    greedy = generate(model, prompt, 20, cfg["context_length"])
    assert torch.equal(generate_greedy_cached(add_kv_cache(model, cfg, KVCacheMultiHeadAttention), prompt, 20), greedy)


def test_the_cached_generation_can_be_timed_token_by_token():
    from gptcourse.kvcache import StepTimer, add_kv_cache, generate_greedy_cached
    from grader.reference.ch04_gpt_model import GPTModel
    from grader.reference.ch06_sampling import KVCacheMultiHeadAttention

    cfg = {"vocab_size": 50, "context_length": 24, "emb_dim": 16, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
           "qkv_bias": False}
    torch.manual_seed(0)
    cached = add_kv_cache(GPTModel(cfg).eval(), cfg, KVCacheMultiHeadAttention)
    timer = StepTimer("cpu")
    ids = generate_greedy_cached(cached, torch.randint(0, 50, (1, 4)), 7, after_each_token=timer.tick)
    assert ids.shape == (1, 11) and len(timer.times) == 7  # one time per new token
    assert all(t >= 0 for t in timer.times)


# ------------------------------------------------------------------------------------------
# Chapter 07: fine-tuning for classification
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
    from gptcourse.chapters.toys import ToyClassifier
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


# ------------------------------------------------------------------------------------------
# Chapter 08: LoRA
# ------------------------------------------------------------------------------------------

def test_lora_on_gpt2_small_with_a_2_class_head_trains_2_666_528_parameters():
    from grader.reference import ch07_classification as ch07
    from grader.reference import ch08_lora as ch08
    cfg = dict(ch04.GPT_CONFIG_124M, qkv_bias=True)
    with torch.device("meta"):
        model = ch04.GPTModel(cfg)
        ch07.add_classification_head(model, num_classes=2, emb_dim=768)
        for param in model.parameters():
            param.requires_grad = False
        ch08.replace_linear_with_lora(model, rank=16, alpha=16)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    assert trainable == 2_666_528
    assert frozen == 124_441_346  # GPT-2 small with its 2-class head, as in the book


def test_a_new_lora_layer_changes_nothing_and_a_merged_one_computes_the_same():
    from grader.reference import ch08_lora as ch08
    torch.manual_seed(123)
    linear = torch.nn.Linear(6, 4)
    wrapped = ch08.LinearWithLoRA(linear, rank=2, alpha=8)
    x = torch.randn(3, 6)
    assert torch.equal(wrapped(x), linear(x)) and wrapped.linear is linear
    assert wrapped.lora.A.shape == (6, 2) and wrapped.lora.A.abs().max() <= 1 / 2 ** 0.5
    with torch.no_grad():
        wrapped.lora.B.normal_()
        merged = torch.nn.Linear(6, 4)
        merged.weight.copy_(linear.weight + 8 * (wrapped.lora.A @ wrapped.lora.B).T)
        merged.bias.copy_(linear.bias)
        torch.testing.assert_close(merged(x), wrapped(x))


# ------------------------------------------------------------------------------------------
# Chapter 09: instruction fine-tuning
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
