# expect: wrong
# mistake: returns (context_vecs, attn_weights) instead of (attn_weights, context_vecs).
# keywords: order, tuple, return, attn_weights
def simple_self_attention(inputs):
    attn_scores = inputs @ inputs.transpose(-2, -1)
    attn_weights = torch.softmax(attn_scores, dim=-1)
    context_vecs = attn_weights @ inputs
    return context_vecs, attn_weights
