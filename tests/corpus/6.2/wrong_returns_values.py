# expect: wrong
# mistake: returns the k values from torch.topk instead of the whole row with the other logits set to -inf.
# keywords: whole row
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_logits, top_pos = torch.topk(logits, k, dim=-1)
    return top_logits
