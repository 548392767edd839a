# expect: wrong
# mistake: keeps a copy.deepcopy of the layer given, so the pretrained layer the model holds is no longer the one in use.
# keywords: self.linear = linear, copy
import copy


class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = copy.deepcopy(linear)
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
