"""The reference package against the known values of the book and the issue."""
import pytest
import torch

from gptcourse.data import read_text
from grader.reference import ch01_text_data as ch01
from grader.reference import ch02_attention as ch02
from grader.reference import ch03_multihead_attention as ch03

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
