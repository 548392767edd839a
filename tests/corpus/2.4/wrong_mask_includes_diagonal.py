# expect: wrong
# mistake: uses torch.triu with diagonal=0, which also masks each token's own position (the first row becomes all -inf and gives NaN).
# keywords: diagonal, NaN, mask
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device)).bool()
    masked = attn_scores.masked_fill(mask, float("-inf"))
    return torch.softmax(masked / d_k ** 0.5, dim=-1)
