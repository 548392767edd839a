# expect: wrong
# mistake: masks and scales correctly but writes the softmax by hand as exp / sum without subtracting the row's maximum: large scores overflow exp to inf and the weights become NaN.
# keywords: overflow, torch.softmax
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    future = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    scaled = attn_scores.masked_fill(future, -torch.inf) / math.sqrt(d_k)
    exps = torch.exp(scaled)  # exp(-inf) = 0 hides the future
    return exps / exps.sum(dim=-1, keepdim=True)
