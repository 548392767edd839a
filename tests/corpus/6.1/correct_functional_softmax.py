# expect: correct
# mistake: none (torch.nn.functional.softmax of the scaled logits)
import torch.nn.functional as F


def softmax_with_temperature(logits, temperature):
    """Next-token probabilities from logits, sharpened (temperature < 1) or flattened (> 1)."""
    return F.softmax(logits / temperature, dim=-1)
