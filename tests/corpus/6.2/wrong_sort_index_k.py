# expect: wrong
# mistake: off by one: takes the threshold at index k of the descending sort (the (k+1)-th largest) instead of index k - 1, so k + 1 logits stay (and k = vocabulary size fails).
# keywords: k-th largest, k + 1, off by one
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    sorted_logits, _ = torch.sort(logits, dim=-1, descending=True)
    cutoff = sorted_logits[..., k:k + 1]
    return logits.masked_fill(logits < cutoff, float("-inf"))
