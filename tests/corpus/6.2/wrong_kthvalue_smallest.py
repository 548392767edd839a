# expect: wrong
# mistake: uses torch.kthvalue(logits, k), which returns the k-th SMALLEST value, as the threshold: keeps all but the k - 1 smallest logits.
# keywords: smallest, k-th largest
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    kth = torch.kthvalue(logits, k, dim=-1, keepdim=True).values
    return logits.masked_fill(logits < kth, float("-inf"))
