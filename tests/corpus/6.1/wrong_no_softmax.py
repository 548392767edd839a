# expect: wrong
# mistake: returns the scaled logits (logits / temperature) and forgets the softmax, so the result is not a probability distribution.
# keywords: sum to 1, add up to 1, not probabilities
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    scaled_logits = logits / temperature
    return scaled_logits
