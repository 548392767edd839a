"""Chapter 03 (multi-head attention): the reference package against the book's values."""
import pytest
import torch

from book import TOY
from grader.reference import ch02_attention as ch02
from grader.reference import ch03_multihead_attention as ch03


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
