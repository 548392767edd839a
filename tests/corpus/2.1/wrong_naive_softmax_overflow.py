# expect: wrong
# mistake: writes the softmax by hand as exp(scores) / exp(scores).sum() without subtracting each row's maximum (the book's naive softmax): once a score passes about 88 in float32, exp overflows to inf and the weights are NaN.
# keywords: overflow, torch.softmax
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def simple_self_attention(inputs):
    attn_scores = inputs @ inputs.transpose(-2, -1)
    attn_weights = softmax_naive(attn_scores)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
