"""The reference package against the known values of the book and the issue."""
import pytest
import torch

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
