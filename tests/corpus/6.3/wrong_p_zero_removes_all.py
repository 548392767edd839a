# expect: wrong
# mistake: removes a token once the mass of the tokens ranked above it reaches p, with no guard for the most probable token: at p = 0 its mass before (0) already "reaches" p, so every token of the row is removed.
# keywords: p = 0, at least one
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_idx = torch.sort(probs, dim=-1, descending=True)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    remove_sorted = cumulative - sorted_probs >= p  # mass before each token already reached p
    remove = torch.zeros_like(remove_sorted).scatter(-1, sorted_idx, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))
