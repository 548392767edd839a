# expect: wrong
# mistake: confuses tril and triu and masks the past (below the diagonal) instead of the future.
# keywords: future, triu, above the diagonal, mask
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.tril(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=-1).bool()
    masked = attn_scores.masked_fill(mask, float("-inf"))
    return torch.softmax(masked / d_k ** 0.5, dim=-1)
