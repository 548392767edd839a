# expect: wrong
# mistake: masks with <= instead of <, which removes the k-th largest logit itself (k - 1 stay).
# keywords: <= instead of <
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_logits, _ = torch.topk(logits, k)
    min_val = top_logits[..., -1:]
    return logits.masked_fill(logits <= min_val, float("-inf"))
