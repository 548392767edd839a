# expect: wrong
# mistake: divides by sqrt(d_k) after the softmax instead of scaling the scores before it.
# keywords: scale, before the softmax, sum to 1, sqrt
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    masked = attn_scores.masked_fill(mask, float("-inf"))
    return torch.softmax(masked, dim=-1) / d_k ** 0.5
