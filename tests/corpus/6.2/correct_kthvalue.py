# expect: correct
# mistake: none (torch.kthvalue counted from the smallest: the k-th largest is the (V - k + 1)-th smallest)
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    vocab_size = logits.shape[-1]
    kth_largest, _ = torch.kthvalue(logits, vocab_size - k + 1, dim=-1, keepdim=True)
    return logits.masked_fill(logits < kth_largest, -torch.inf)
