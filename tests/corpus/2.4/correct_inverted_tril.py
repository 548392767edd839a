# expect: correct
# mistake: none (builds the allowed positions with tril and masks where they are not allowed; scales before masking)
def causal_attention_weights(attn_scores, d_k):
    n = attn_scores.shape[-1]
    allowed = torch.tril(torch.ones(n, n, device=attn_scores.device)).bool()
    scaled = attn_scores / d_k ** 0.5
    return scaled.masked_fill(~allowed, -torch.inf).softmax(dim=-1)
