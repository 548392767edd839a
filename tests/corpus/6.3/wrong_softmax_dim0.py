# expect: wrong
# mistake: takes the softmax over dim=0 (across the rows of a batch) instead of over the vocabulary, the last dimension; right only for a single 1-D row.
# keywords: dim=0
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=0)
    sorted_probs, sorted_ids = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, sorted_ids, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
