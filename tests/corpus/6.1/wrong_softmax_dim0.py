# expect: wrong
# mistake: takes the softmax over dim=0 (the rows of a batch) instead of the vocabulary, the last dimension; right only for a single 1-D row of logits.
# keywords: dim=0
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    return torch.softmax(logits / temperature, dim=0)
