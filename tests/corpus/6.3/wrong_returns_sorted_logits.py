# expect: wrong
# mistake: filters the sorted logits and returns them in sorted order, so the kept logits are no longer at their token ids.
# keywords: sorted order
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    sorted_logits, _ = torch.sort(logits, dim=-1, descending=True)
    sorted_probs = torch.softmax(sorted_logits, dim=-1)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    to_remove = (cumulative - sorted_probs) >= p
    return sorted_logits.masked_fill(to_remove, float("-inf"))
