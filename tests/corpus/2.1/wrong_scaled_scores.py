# expect: wrong
# mistake: divides the scores by sqrt(d) although the simple attention of 2.1 uses the plain dot products.
# keywords: scale, scaling, sqrt
def simple_self_attention(inputs):
    d = inputs.shape[-1]
    attn_scores = inputs @ inputs.transpose(-2, -1) / d ** 0.5
    attn_weights = torch.softmax(attn_scores, dim=-1)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
