# expect: wrong
# mistake: builds the mask with torch.tril and fills where it is True, which hides each token's own position and its past (the last row is all -inf: NaN), instead of the future.
# keywords: itself, diagonal
# absent: dim=-1
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.tril(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=attn_scores.device))
    masked = attn_scores.masked_fill(mask, float("-inf"))
    return torch.softmax(masked / d_k ** 0.5, dim=-1)
