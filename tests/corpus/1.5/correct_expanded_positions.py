# expect: correct
# mistake: none (a (batch, tokens) tensor of positions, expanded like the ids, looked up per row)
def embed(token_ids, tok_emb, pos_emb):
    positions = torch.arange(token_ids.shape[-1], device=token_ids.device).unsqueeze(0).expand_as(token_ids)
    return tok_emb(token_ids) + pos_emb(positions)
