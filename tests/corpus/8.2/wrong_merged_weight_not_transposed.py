# expect: wrong
# mistake: merges the update into the weight, F.linear(x, W + alpha * A @ B, bias), without transposing A @ B (in, out) to the weight's (out, in) layout.
# keywords: (A @ B).T
import torch.nn.functional as F


class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        lora = self.lora
        merged = self.linear.weight + lora.alpha * (lora.A @ lora.B)
        return F.linear(x, merged, self.linear.bias)
