# expect: correct
# mistake: none (Hugging Face TopPLogitsWarper style: ascending sort, remove while the cumulative mass from the bottom is <= 1 - p, always keep the last (most probable) token)
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    sorted_logits, sorted_indices = torch.sort(logits, descending=False, dim=-1)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    sorted_indices_to_remove = cumulative_probs <= (1 - p)
    sorted_indices_to_remove[..., -1:] = False  # at least one token
    indices_to_remove = sorted_indices_to_remove.scatter(-1, sorted_indices, sorted_indices_to_remove)
    return logits.masked_fill(indices_to_remove, -float("inf"))
