# expect: wrong
# mistake: appends the new token with torch.cat((idx, idx_next), dim=0), along the batch, instead of dim=1.
# keywords: dim=1, cat
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=0)
    return idx
