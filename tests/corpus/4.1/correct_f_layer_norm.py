# expect: correct
# mistake: none (F.layer_norm over the last dimension with its own scale and shift parameters, cast to the input's dtype)
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.scale.to(x.dtype), self.shift.to(x.dtype), self.eps)
