# expect: wrong
# mistake: returns F.gelu(x), PyTorch's exact (erf) GELU, instead of the tanh approximation GPT-2 uses.
# keywords: tanh, approximate, erf
import torch.nn.functional as F


class GELU(nn.Module):
    def forward(self, x):
        return F.gelu(x)
