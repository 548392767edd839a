# expect: correct
# mistake: none (clones the scores first, then uses the in-place masked_fill_ on the copy)
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    scores = attn_scores.clone()
    scores.masked_fill_(mask, float("-inf"))
    return torch.softmax(scores / d_k ** 0.5, dim=-1)
