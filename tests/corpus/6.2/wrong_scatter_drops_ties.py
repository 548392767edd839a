# expect: wrong
# mistake: scatters topk's values into a row of -inf, so exactly k logits stay: a logit tied with the k-th largest is dropped.
# keywords: ties at the k-th value
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_vals, top_idx = torch.topk(logits, k, dim=-1)
    filtered = torch.full_like(logits, float("-inf"))
    return filtered.scatter(-1, top_idx, top_vals)
