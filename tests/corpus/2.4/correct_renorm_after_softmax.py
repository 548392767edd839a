# expect: correct
# mistake: none (softmax first, then zeroes the future and renormalises each row, as the book shows; mathematically equal)
def causal_attention_weights(attn_scores, d_k):
    T = attn_scores.shape[-1]
    weights = torch.softmax(attn_scores / d_k ** 0.5, dim=-1)
    keep = torch.tril(torch.ones(T, T, dtype=attn_scores.dtype, device=attn_scores.device))
    weights = weights * keep
    return weights / weights.sum(dim=-1, keepdim=True)
