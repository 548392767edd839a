# expect: wrong
# mistake: maps the sorted decision back with gather(-1, sorted_ids) instead of scatter (or gather with the inverse permutation, argsort of sorted_ids): the mask lands on the wrong tokens.
# keywords: gather, scatter
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_ids = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before < p
    keep = torch.gather(keep_sorted, -1, sorted_ids)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
