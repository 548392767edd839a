# expect: wrong
# mistake: concatenates the token and position embeddings on the last dim (torch.cat) instead of adding them, so the output is twice as wide.
# keywords: add, shape
def embed(token_ids, tok_emb, pos_emb):
    tok = tok_emb(token_ids)
    pos = pos_emb(torch.arange(token_ids.shape[-1], device=token_ids.device))
    return torch.cat([tok, pos.expand_as(tok)], dim=-1)
