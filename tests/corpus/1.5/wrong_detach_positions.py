# expect: wrong
# mistake: calls .detach() on the position embeddings ("they are just positions"), so no gradient reaches the position table.
# keywords: gradient, detach
# absent: position embeddings are missing
def embed(token_ids, tok_emb, pos_emb):
    num_tokens = token_ids.shape[-1]
    positions = torch.arange(num_tokens, device=token_ids.device)
    pos_embeddings = pos_emb(positions).detach()
    return tok_emb(token_ids) + pos_embeddings
