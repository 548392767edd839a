# expect: wrong
# mistake: slices the position table through .data, pos_emb.weight.data[:num_tokens], which is outside autograd, so the position table gets no gradient.
# keywords: gradient, .data
# absent: position embeddings are missing
def embed(token_ids, tok_emb, pos_emb):
    num_tokens = token_ids.shape[-1]
    return tok_emb(token_ids) + pos_emb.weight.data[:num_tokens]
