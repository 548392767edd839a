# expect: correct
# mistake: none (softmax by hand, subtracting each row's maximum before exp)
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    scaled = logits / temperature
    shifted = scaled - scaled.max(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)
