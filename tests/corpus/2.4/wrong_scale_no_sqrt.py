# expect: wrong
# mistake: divides the scores by d_k instead of sqrt(d_k).
# keywords: scale, scaling, sqrt, d_k
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    masked = attn_scores.masked_fill(mask, float("-inf"))
    return torch.softmax(masked / d_k, dim=-1)
