# expect: wrong
# mistake: divides the logits by the square of the temperature (logits / temperature ** 2): right at temperature 1, too sharp below it and too flat above.
# keywords: temperature squared, temperature itself
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    return torch.softmax(logits / temperature ** 2, dim=-1)
