# expect: wrong
# mistake: returns log-probabilities (log_softmax) instead of probabilities.
# keywords: log-probabilities, log_softmax
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    return torch.log_softmax(logits / temperature, dim=-1)
