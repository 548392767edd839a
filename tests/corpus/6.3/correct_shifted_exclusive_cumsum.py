# expect: correct
# mistake: none (exclusive cumulative sum built by shifting the inclusive one right with a column of zeros; unsorts with argsort + gather)
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    inclusive = sorted_probs.cumsum(dim=-1)
    zeros = torch.zeros_like(inclusive[..., :1])
    exclusive = torch.cat([zeros, inclusive[..., :-1]], dim=-1)  # mass of the tokens ranked above
    keep_sorted = exclusive < p
    keep_sorted[..., 0] = True  # the most probable token always stays (p = 0 too)
    inverse = order.argsort(dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return logits.masked_fill(~keep, float("-inf"))
