# expect: wrong
# mistake: takes the number of tokens from attn_scores.shape[0], which is the batch size for batched (..., T, T) scores.
# keywords: batch, shape, (..., T, T), num_tokens
# absent: truncated, self.mask
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[0]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    masked = attn_scores.masked_fill(mask, float("-inf"))
    return torch.softmax(masked / d_k ** 0.5, dim=-1)
