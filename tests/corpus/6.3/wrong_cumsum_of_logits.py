# expect: wrong
# mistake: accumulates the sorted logits instead of their probabilities (no softmax before the cumsum), so the running sum is not a probability mass.
# keywords: probabilit, softmax
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    sorted_logits, sorted_ids = torch.sort(logits, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_logits, dim=-1) - sorted_logits
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, sorted_ids, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
