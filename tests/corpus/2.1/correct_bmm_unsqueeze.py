# expect: correct
# mistake: none (adds a batch dim to 2-D input and uses torch.bmm, then removes it again)
def simple_self_attention(inputs):
    unbatched = inputs.dim() == 2
    x = inputs.unsqueeze(0) if unbatched else inputs
    attn_scores = torch.bmm(x, x.transpose(1, 2))
    attn_weights = attn_scores.softmax(dim=-1)
    context_vecs = torch.bmm(attn_weights, x)
    if unbatched:
        return attn_weights.squeeze(0), context_vecs.squeeze(0)
    return attn_weights, context_vecs
