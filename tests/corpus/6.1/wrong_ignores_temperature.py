# expect: wrong
# mistake: forgets the temperature altogether: plain softmax of the logits.
# keywords: not used
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    probs = torch.softmax(logits, dim=-1)
    return probs
