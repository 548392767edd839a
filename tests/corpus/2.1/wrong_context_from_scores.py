# expect: wrong
# mistake: computes the context vectors from the unnormalised scores instead of the attention weights.
# keywords: raw scores
def simple_self_attention(inputs):
    attn_scores = inputs @ inputs.transpose(-2, -1)
    attn_weights = torch.softmax(attn_scores, dim=-1)
    context_vecs = attn_scores @ inputs
    return attn_weights, context_vecs
