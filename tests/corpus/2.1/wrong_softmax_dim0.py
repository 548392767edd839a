# expect: wrong
# mistake: applies the softmax over dim=0 instead of the last dimension, so each column (not each row) of the weights sums to 1.
# keywords: softmax, dim, sum to 1, rows
def simple_self_attention(inputs):
    # dot product of every token with every other token
    attn_scores = inputs @ inputs.transpose(-2, -1)
    # normalise the scores
    attn_weights = torch.softmax(attn_scores, dim=0)
    context_vecs = attn_weights @ inputs
    return attn_weights, context_vecs
