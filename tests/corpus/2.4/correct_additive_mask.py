# expect: correct
# mistake: none (adds an additive mask that is -inf above the diagonal and 0 elsewhere)
def causal_attention_weights(attn_scores, d_k):
    n = attn_scores.shape[-1]
    additive = torch.full((n, n), float("-inf"), dtype=attn_scores.dtype, device=attn_scores.device).triu(1)
    return torch.softmax((attn_scores + additive) / d_k ** 0.5, dim=-1)
