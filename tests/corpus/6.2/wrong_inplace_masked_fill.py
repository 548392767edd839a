# expect: wrong
# mistake: masks the input in place with masked_fill_, so the caller's logits are overwritten with -inf.
# keywords: in place
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_values, _ = torch.topk(logits, k, dim=-1)
    kth_largest = top_values[..., -1:]
    logits.masked_fill_(logits < kth_largest, float("-inf"))
    return logits
