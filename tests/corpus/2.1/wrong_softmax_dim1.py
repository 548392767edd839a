# expect: wrong
# mistake: hard-codes softmax(dim=1), which is the last dim for a (T, d) input but the query dim for a batched (B, T, d) input.
# keywords: softmax, dim, batch, last dim
def simple_self_attention(inputs):
    attn_scores = inputs @ inputs.transpose(-2, -1)
    attn_weights = torch.softmax(attn_scores, dim=1)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
