# expect: correct
# mistake: none (finds how many tokens the nucleus needs with a count, then keeps every token at least as probable as the last one kept)
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, _ = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    n_keep = (mass_before < p).sum(dim=-1, keepdim=True).clamp(min=1)  # at least 1, also for p = 0
    threshold = torch.gather(sorted_probs, -1, n_keep - 1)
    return logits.masked_fill(probs < threshold, float("-inf"))
