# expect: wrong
# mistake: applies the softmax first and then zeroes the future weights without renormalising, so the rows no longer sum to 1.
# keywords: sum to 1, rows, renormalise, before the softmax
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    attn_weights = torch.softmax(attn_scores / d_k ** 0.5, dim=-1)
    keep = torch.tril(torch.ones(num_tokens, num_tokens, device=attn_scores.device, dtype=attn_scores.dtype))
    return attn_weights * keep
