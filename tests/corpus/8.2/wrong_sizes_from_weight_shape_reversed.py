# expect: wrong
# mistake: reads in_dim, out_dim = linear.weight.shape, but nn.Linear's weight is (out_features, in_features).
# keywords: (out_features, in_features)
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        in_dim, out_dim = linear.weight.shape
        self.linear = linear
        self.lora = LoRALayer(in_dim, out_dim, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
