# expect: correct
# mistake: none (torch.where with a boolean future mask instead of masked_fill; scales with math.sqrt)
def causal_attention_weights(attn_scores, d_k):
    T = attn_scores.size(-1)
    future = torch.ones(T, T, dtype=torch.bool, device=attn_scores.device).triu(1)
    masked = torch.where(future, float("-inf"), attn_scores)
    return torch.softmax(masked / math.sqrt(d_k), dim=-1)
