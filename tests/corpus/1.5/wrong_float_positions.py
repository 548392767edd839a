# expect: wrong
# mistake: makes the positions as floats, torch.arange(num_tokens, dtype=torch.float32), which an embedding layer refuses.
# keywords: long, integer
def embed(token_ids, tok_emb, pos_emb):
    num_tokens = token_ids.shape[-1]
    positions = torch.arange(num_tokens, dtype=torch.float32, device=token_ids.device)
    return tok_emb(token_ids) + pos_emb(positions)
