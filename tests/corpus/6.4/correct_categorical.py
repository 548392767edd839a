# expect: correct
# mistake: none (samples with torch.distributions.Categorical instead of torch.multinomial; filters by hand with topk and the reference's top_p_logits)
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, top_p=None, eos_id=None):
    """Add up to max_new_tokens tokens to each row of idx (batch, num_tokens), greedy when
    temperature is 0, else sampled after top-k, then top-p filtering; stop early once every
    row has produced eos_id."""
    has_ended = torch.zeros(idx.size(0), dtype=torch.bool, device=idx.device)
    for step in range(max_new_tokens):
        with torch.no_grad():
            out = model(idx[:, -context_size:])
        last = out[:, -1, :]
        if temperature == 0:
            nxt = last.argmax(dim=-1)
        else:
            if top_k is not None:
                kth = torch.topk(last, top_k, dim=-1).values[:, -1:]
                last = last.masked_fill(last < kth, float("-inf"))
            if top_p is not None:
                last = top_p_logits(last, top_p)
            dist = torch.distributions.Categorical(logits=last / temperature)
            nxt = dist.sample()
        idx = torch.cat([idx, nxt.unsqueeze(1)], dim=1)
        if eos_id is not None:
            has_ended = has_ended | (nxt == eos_id)
            if has_ended.all():
                break
    return idx
