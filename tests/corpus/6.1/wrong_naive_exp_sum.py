# expect: wrong
# mistake: writes the softmax by hand as exp / sum without subtracting the row maximum: for a small temperature exp overflows to inf and inf / inf gives NaN.
# keywords: overflow, stable
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    exps = torch.exp(logits / temperature)
    return exps / exps.sum(dim=-1, keepdim=True)
