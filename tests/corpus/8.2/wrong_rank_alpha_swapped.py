# expect: wrong
# mistake: passes alpha and rank to LoRALayer in the wrong order: LoRALayer(in, out, alpha, rank).
# keywords: order of the arguments
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, alpha, rank)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
