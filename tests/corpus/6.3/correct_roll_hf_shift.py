# expect: correct
# mistake: none (descending sort, remove where cumsum > p, shifted right with torch.roll and the first entry cleared)
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    sorted_probs, sorted_idx = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    remove = torch.cumsum(sorted_probs, dim=-1) > p
    remove = torch.roll(remove, shifts=1, dims=-1)
    remove[..., 0] = False
    remove = torch.zeros_like(remove).scatter_(-1, sorted_idx, remove)
    return torch.where(remove, torch.full_like(logits, float("-inf")), logits)
