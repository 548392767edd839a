# expect: wrong
# mistake: saves memory with x.mul_(...), which overwrites the caller's input tensor with the result.
# keywords: in place, in-place, input
class GELU(nn.Module):
    def forward(self, x):
        gate = 0.5 * (1 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
        return x.mul_(gate)
