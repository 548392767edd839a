# expect: wrong
# mistake: keeps only the tokens whose cumulative probability is still <= p (the most probable one always kept), so the token whose probability makes the mass reach p is dropped and the kept mass stays below p.
# keywords: reach p
def top_p_logits(logits, p):
    """Keep the fewest most probable tokens whose probabilities add up to at least p; the rest -inf."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_idx = torch.sort(probs, dim=-1, descending=True)
    cum_probs = torch.cumsum(sorted_probs, dim=-1)
    remove_sorted = cum_probs > p
    remove_sorted[..., 0] = False  # always keep the most probable token
    remove = remove_sorted.scatter(-1, sorted_idx, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))
