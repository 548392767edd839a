# expect: wrong
# mistake: book-style min_val = top_logits[:, -1] without keeping the dimension: a (batch,) tensor that lines up with the vocabulary instead of the rows (and an IndexError on a single 1-D row).
# keywords: keep the dimension, [..., -1:], 1-d
def top_k_logits(logits, k):
    """Keep the k largest logits of each row (and any tie with the k-th); set the rest to -inf."""
    top_logits, top_pos = torch.topk(logits, k)
    min_val = top_logits[:, -1]
    return torch.where(
        condition=logits < min_val,
        input=torch.tensor(float("-inf")),
        other=logits,
    )
