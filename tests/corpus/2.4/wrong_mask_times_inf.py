# expect: wrong
# mistake: adds the mask multiplied by -inf (mask * float("-inf")): where the mask is 0 the product 0 * -inf is NaN, so every allowed score becomes NaN and every row of weights is NaN.
# keywords: 0 * -inf
# absent: overflow, every score was hidden
# neighbour-of: wrong_tril_as_future, wrong_naive_softmax_overflow
def causal_attention_weights(attn_scores, d_k):
    num_tokens = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1)
    return torch.softmax((attn_scores + mask * float("-inf")) / d_k ** 0.5, dim=-1)
