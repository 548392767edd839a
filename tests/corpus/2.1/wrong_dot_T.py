# expect: wrong
# mistake: uses inputs.T, which reverses all dimensions of a batched (B, T, d) input instead of swapping the last two.
# keywords: batch, transpose, .T, 3-D
# absent: truncated, self.mask
def simple_self_attention(inputs):
    attn_scores = inputs @ inputs.T
    attn_weights = torch.softmax(attn_scores, dim=-1)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
