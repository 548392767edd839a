# expect: wrong
# mistake: at temperature 0 takes the argmax over dim 0 (down the batch's rows) instead of over the vocabulary (dim=-1).
# keywords: argmax over dim 0, dim=-1
# neighbour-of: wrong_first_position
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        next_logits = logits[:, -1, :]
        if temperature == 0.0:
            idx_next = torch.argmax(next_logits, dim=0, keepdim=True)
        else:
            if top_k is not None:
                next_logits = top_k_logits(next_logits, top_k)
            if top_p is not None:
                next_logits = top_p_logits(next_logits, top_p)
            idx_next = torch.multinomial(softmax_with_temperature(next_logits, temperature), num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
        if eos_id is not None:
            finished |= idx_next.squeeze(1) == eos_id
            if finished.all():
                break
    return idx
