# expect: correct
# mistake: none (slices the position table, pos_emb.weight[:num_tokens], instead of a lookup)
def embed(token_ids, tok_emb, pos_emb):
    num_tokens = token_ids.shape[-1]
    return tok_emb(token_ids) + pos_emb.weight[:num_tokens]
