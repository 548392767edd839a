# expect: wrong
# mistake: uses the in-place masked_fill_ on the argument, which overwrites the caller's score tensor.
# keywords: changed its input, in place (for
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    attn_scores.masked_fill_(mask, float("-inf"))
    return torch.softmax(attn_scores / d_k ** 0.5, dim=-1)
