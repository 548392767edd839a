"""Chapter 02 (attention): the reference package against the book's values."""
import torch

from book import TOY, close
from grader.reference import ch02_attention as ch02


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
