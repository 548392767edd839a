# expect: wrong
# mistake: writes the -inf into the input with masked_fill_ and returns it, so the caller's logits are changed.
# keywords: in place
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_ids = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop = torch.zeros_like(mass_before, dtype=torch.bool).scatter(-1, sorted_ids, mass_before >= p)
    logits.masked_fill_(drop, float("-inf"))
    return logits
