# expect: wrong
# mistake: takes the smallest of all the top-k values of the batch (top_logits.min(), no dim) as one threshold for every row, instead of each row's own k-th largest.
# keywords: each row, own k-th
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_logits, _ = torch.topk(logits, k, dim=-1)
    min_val = top_logits.min()
    return torch.where(logits < min_val, torch.tensor(float("-inf"), dtype=logits.dtype), logits)
