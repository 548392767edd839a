# expect: wrong
# mistake: calls the non-in-place masked_fill but never assigns its result, so no masking happens.
# keywords: masked_fill, assign, mask, future
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    attn_scores.masked_fill(mask, float("-inf"))
    return torch.softmax(attn_scores / d_k ** 0.5, dim=-1)
