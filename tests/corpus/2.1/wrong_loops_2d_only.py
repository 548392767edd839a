# expect: wrong
# mistake: computes the scores with the book's nested loops and torch.dot, which only works for a single (T, d) sequence, not for a batch.
# keywords: batch, 3-D, (B, T, d)
def simple_self_attention(inputs):
    num_tokens = inputs.shape[0]
    attn_scores = torch.empty(num_tokens, num_tokens, dtype=inputs.dtype, device=inputs.device)
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            attn_scores[i, j] = torch.dot(x_i, x_j)
    attn_weights = torch.softmax(attn_scores, dim=-1)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
