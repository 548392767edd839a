# expect: correct
# mistake: none (PyTorch's F.gelu with approximate="tanh")
import torch.nn.functional as F


class GELU(nn.Module):
    def forward(self, x):
        return F.gelu(x, approximate="tanh")
