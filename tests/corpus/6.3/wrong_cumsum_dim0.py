# expect: wrong
# mistake: accumulates the sorted probabilities over dim=0, down the rows of a batch, instead of along each row: right for a single row, wrong for a batch.
# keywords: each row, in each row
# absent: ascending
# neighbour-of: wrong_ascending_sort
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_ids = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=0) - sorted_probs
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, sorted_ids, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
