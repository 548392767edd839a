# expect: correct
# mistake: none (reads the sizes from linear.weight.shape in the right order, (out_features, in_features))
class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        out_dim, in_dim = linear.weight.shape
        self.linear = linear
        self.lora = LoRALayer(in_dim, out_dim, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
