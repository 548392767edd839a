# expect: correct
# mistake: none (LoRALayer built with keyword arguments; forward computes the wrapped layer with F.linear on its own weight and bias)
import torch.nn.functional as F


class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(in_dim=linear.in_features, out_dim=linear.out_features, rank=rank, alpha=alpha)

    def forward(self, x):
        base = F.linear(x, self.linear.weight, self.linear.bias)  # bias may be None
        return base + self.lora(x)
