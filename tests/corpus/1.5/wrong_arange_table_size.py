# expect: wrong
# mistake: takes the number of positions from the table, torch.arange(pos_emb.num_embeddings), instead of from the input's sequence length.
# keywords: num_tokens, shape[-1], sequence length
def embed(token_ids, tok_emb, pos_emb):
    positions = torch.arange(pos_emb.num_embeddings, device=token_ids.device)
    return tok_emb(token_ids) + pos_emb(positions)
