# expect: correct
# mistake: none (torch.matmul, swapaxes and F.softmax; returns a tuple built explicitly)
import torch.nn.functional as F


def simple_self_attention(inputs):
    scores = torch.matmul(inputs, inputs.swapaxes(-1, -2))
    weights = F.softmax(scores, dim=scores.dim() - 1)
    context = torch.matmul(weights, inputs)
    return (weights, context)
