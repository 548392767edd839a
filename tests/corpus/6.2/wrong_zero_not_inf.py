# expect: wrong
# mistake: sets the removed logits to 0 instead of -inf, so they keep a probability after the softmax.
# keywords: 0 instead of -inf
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_logits, _ = torch.topk(logits, k, dim=-1)
    threshold = top_logits[..., -1].unsqueeze(-1)
    return torch.where(logits < threshold, torch.zeros_like(logits), logits)
