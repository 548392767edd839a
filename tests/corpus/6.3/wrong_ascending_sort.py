# expect: wrong
# mistake: forgets descending=True in torch.sort, so the mass is accumulated from the least probable token and the least probable tokens are kept.
# keywords: least probable, descending
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_ids = torch.sort(probs, dim=-1)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, sorted_ids, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
