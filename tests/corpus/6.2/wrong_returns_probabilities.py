# expect: wrong
# mistake: filters the logits right, then returns their softmax: probabilities where the task returns logits (the removed ones come out as 0).
# keywords: probabilities
# absent: not 0
# neighbour-of: wrong_zero_not_inf
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_logits, _ = torch.topk(logits, k, dim=-1)
    filtered = logits.masked_fill(logits < top_logits[..., -1:], float("-inf"))
    return torch.softmax(filtered, dim=-1)
