# expect: wrong
# mistake: computes the position embeddings but returns only the token embeddings (the sum is assigned to a name that is never returned).
# keywords: position, add
def embed(token_ids, tok_emb, pos_emb):
    token_embeddings = tok_emb(token_ids)
    pos_embeddings = pos_emb(torch.arange(token_ids.shape[-1], device=token_ids.device))
    input_embeddings = token_embeddings + pos_embeddings
    return token_embeddings
