# expect: wrong
# mistake: masks the future scores with 0 instead of -inf, so after the softmax the future positions still get weight.
# keywords: -inf, future, mask, 0
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    masked = attn_scores.masked_fill(mask, 0.0)
    return torch.softmax(masked / d_k ** 0.5, dim=-1)
