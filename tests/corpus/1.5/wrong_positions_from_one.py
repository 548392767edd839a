# expect: wrong
# mistake: numbers the positions 1..num_tokens with torch.arange(1, num_tokens + 1) instead of 0..num_tokens - 1.
# keywords: 0, start at 1, arange(num_tokens)
def embed(token_ids, tok_emb, pos_emb):
    num_tokens = token_ids.shape[-1]
    positions = torch.arange(1, num_tokens + 1, device=token_ids.device)
    return tok_emb(token_ids) + pos_emb(positions)
