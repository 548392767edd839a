# expect: wrong
# mistake: multiplies the logits by the temperature instead of dividing them, so a high temperature sharpens the distribution instead of flattening it.
# keywords: multiplied
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    scaled = logits * temperature
    return torch.softmax(scaled, dim=-1)
