# expect: wrong
# mistake: makes the positions with torch.arange(num_tokens) without device=, as in the book's notebook; right on the CPU, but the positions stay on the CPU when the ids and tables are on a GPU (caught on the meta device without a GPU).
# keywords: device, cuda, cpu
def embed(token_ids, tok_emb, pos_emb):
    num_tokens = token_ids.shape[1]
    token_embeddings = tok_emb(token_ids)
    pos_embeddings = pos_emb(torch.arange(num_tokens))
    return token_embeddings + pos_embeddings
