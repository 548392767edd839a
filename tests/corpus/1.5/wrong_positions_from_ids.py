# expect: wrong
# mistake: looks the position table up with the token ids, pos_emb(token_ids), instead of with the positions 0..num_tokens - 1.
# keywords: positions, arange
def embed(token_ids, tok_emb, pos_emb):
    return tok_emb(token_ids) + pos_emb(token_ids)
