# expect: correct
# mistake: none (k-th value from a descending sort; torch.where with a full_like of -inf)
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    sorted_logits = torch.sort(logits, dim=-1, descending=True).values
    kth = sorted_logits[..., k - 1].unsqueeze(-1)
    neg_inf = torch.full_like(logits, float("-inf"))
    return torch.where(logits >= kth, logits, neg_inf)
