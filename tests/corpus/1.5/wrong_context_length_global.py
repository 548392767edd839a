# expect: wrong
# mistake: uses the notebook's demo variable context_length (defined in an exploration cell, not in the graded cell) for the positions, torch.arange(context_length), as in the book's example where the input length equals context_length.
# keywords: context_length, not defined, num_tokens
def embed(token_ids, tok_emb, pos_emb):
    token_embeddings = tok_emb(token_ids)
    pos_embeddings = pos_emb(torch.arange(context_length, device=token_ids.device))
    return token_embeddings + pos_embeddings
