# expect: wrong
# mistake: divides the input in place (logits /= temperature), so the caller's logits are changed by the call.
# keywords: in place
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    logits /= temperature
    return torch.softmax(logits, dim=-1)
