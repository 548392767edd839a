# expect: wrong
# mistake: computes the removal mask in sorted order and applies it to the logits in vocabulary order, without mapping it back through the sorted indices.
# keywords: sorted order, scatter
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, _ = torch.sort(probs, dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    remove = mass_before >= p
    return logits.masked_fill(remove, float("-inf"))
