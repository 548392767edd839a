# expect: wrong
# mistake: accumulates the probabilities in vocabulary order, without sorting them from the most probable first.
# keywords: vocabulary order
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    cum = torch.cumsum(probs, dim=-1)
    drop = (cum - probs) >= p
    return logits.masked_fill(drop, float("-inf"))
