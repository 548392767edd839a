# expect: correct
# mistake: none (exp of log_softmax, which is computed stably)
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    log_probs = torch.log_softmax(logits / temperature, dim=-1)
    return log_probs.exp()
