# expect: wrong
# mistake: adds the whole position table pos_emb.weight (context_length rows) instead of the rows of the first num_tokens positions; only works when num_tokens equals the table size.
# keywords: num_tokens, arange, positions
def embed(token_ids, tok_emb, pos_emb):
    return tok_emb(token_ids) + pos_emb.weight
