# expect: wrong
# mistake: takes torch.topk over dim=0, the rows of the batch, instead of the vocabulary (the last dimension): right only for a single 1-D row.
# keywords: dim=-1, last dimension
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    values, _ = torch.topk(logits, k, dim=0)
    kth = values[-1:]
    return logits.masked_fill(logits < kth, float("-inf"))
