# expect: correct
# mistake: none (writes a numerically stable softmax by hand with exp(x - max))
def _softmax_last(x):
    x = x - x.amax(dim=-1, keepdim=True)
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def simple_self_attention(inputs):
    attn_scores = inputs @ inputs.mT
    attn_weights = _softmax_last(attn_scores)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
