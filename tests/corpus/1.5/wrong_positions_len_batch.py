# expect: wrong
# mistake: takes num_tokens = len(token_ids), which is the batch size of a (batch, tokens) tensor, not the number of tokens.
# keywords: batch, shape[-1], num_tokens
def embed(token_ids, tok_emb, pos_emb):
    num_tokens = len(token_ids)
    positions = torch.arange(num_tokens, device=token_ids.device)
    return tok_emb(token_ids) + pos_emb(positions)
