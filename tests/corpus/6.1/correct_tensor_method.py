# expect: correct
# mistake: none (the tensor method .softmax(-1) after torch.div)
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    return torch.div(logits, temperature).softmax(-1)
