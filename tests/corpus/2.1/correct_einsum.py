# expect: correct
# mistake: none (uses torch.einsum with an ellipsis for both products)
def simple_self_attention(inputs):
    # scores[..., i, j] = <x_i, x_j>
    attn_scores = torch.einsum("...id,...jd->...ij", inputs, inputs)
    attn_weights = torch.softmax(attn_scores, dim=-1)
    context_vecs = torch.einsum("...ij,...jd->...id", attn_weights, inputs)
    return attn_weights, context_vecs
