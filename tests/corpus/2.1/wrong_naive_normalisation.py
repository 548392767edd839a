# expect: wrong
# mistake: normalises the scores by dividing by their row sum instead of applying a softmax.
# keywords: softmax
def simple_self_attention(inputs):
    attn_scores = inputs @ inputs.transpose(-2, -1)
    # make each row sum to one
    attn_weights = attn_scores / attn_scores.sum(dim=-1, keepdim=True)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
