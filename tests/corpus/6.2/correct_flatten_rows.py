# expect: correct
# mistake: none (flattens the leading dimensions to (rows, vocab), works on 2-D with topk's min, reshapes back)
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    shape = logits.shape
    rows = logits.reshape(-1, shape[-1])
    threshold = torch.topk(rows, k, dim=1).values.min(dim=1, keepdim=True).values
    out = torch.where(rows < threshold, torch.tensor(float("-inf"), dtype=rows.dtype, device=rows.device), rows)
    return out.reshape(shape)
