# expect: correct
# mistake: none (a keep mask scattered from topk's indices, widened to every logit tied with the k-th)
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    vals, idx = torch.topk(logits, k, dim=-1)
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, idx, True)
    keep = keep | (logits == vals[..., -1:])  # ties with the k-th value stay too
    return logits.masked_fill(~keep, float("-inf"))
