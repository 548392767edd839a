# expect: wrong
# mistake: computes a stable softmax in numpy and turns it back into a tensor: right values, but no gradient flows back to the logits (and the result is always float32).
# keywords: not connected to the autograd graph, numpy
def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    import numpy as np
    z = logits.detach().cpu().numpy() / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return torch.tensor(e / e.sum(axis=-1, keepdims=True), dtype=torch.float32)
