# expect: correct
# mistake: none (positions made on the device of the token table's weight, size(1) for the sequence length)
def embed(token_ids, tok_emb, pos_emb):
    batch_size, seq_len = token_ids.size()
    token_embeddings = tok_emb(token_ids)
    pos_embeddings = pos_emb(torch.arange(seq_len, device=tok_emb.weight.device))
    return token_embeddings + pos_embeddings
