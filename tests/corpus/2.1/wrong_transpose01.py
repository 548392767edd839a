# expect: wrong
# mistake: transposes dims 0 and 1, which is right for (T, d) but swaps batch and tokens for a batched (B, T, d) input.
# keywords: batch, transpose, 3-D
# absent: truncated, self.mask
def simple_self_attention(inputs):
    attn_scores = torch.matmul(inputs, inputs.transpose(0, 1))
    attn_weights = torch.softmax(attn_scores, dim=-1)
    context_vecs = torch.matmul(attn_weights, inputs)
    return attn_weights, context_vecs
