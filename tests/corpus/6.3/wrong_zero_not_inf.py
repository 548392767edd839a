# expect: wrong
# mistake: sets the removed logits to 0 instead of -inf, so they keep a probability after the softmax.
# keywords: 0 instead of -inf
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_ids = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, sorted_ids, drop_sorted)
    return logits.masked_fill(drop, 0.0)
