# expect: wrong
# mistake: loops range(max_new_tokens - 1) times, one new token too few.
# keywords: max_new_tokens, too few, one token
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens - 1):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
