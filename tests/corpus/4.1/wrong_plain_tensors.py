# expect: wrong
# mistake: stores scale and shift as plain tensors, not nn.Parameter, so they are not parameters of the module (not trained, not in the state_dict, not moved by .to()).
# keywords: nn.parameter, parameter
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = torch.ones(emb_dim)
        self.shift = torch.zeros(emb_dim)

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift
