# expect: wrong
# mistake: Hugging Face style shift of the removal mask one place to the right, but forgets to clear its first entry: when the most probable token alone passes p, the whole row becomes -inf (at least one token must stay).
# keywords: at least one
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    sorted_logits, sorted_indices = torch.sort(logits, descending=True, dim=-1)
    cumulative_probs = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
    sorted_indices_to_remove = cumulative_probs > p
    # shift right so that the token crossing the threshold is kept too
    sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
    indices_to_remove = sorted_indices_to_remove.scatter(-1, sorted_indices, sorted_indices_to_remove)
    return logits.masked_fill(indices_to_remove, float("-inf"))
