# expect: wrong
# mistake: crops only if len(idx) > context_size, but len(idx) is the batch size, not the number of tokens, so the context is never cropped.
# keywords: len, batch, shape[1], crop
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:] if len(idx) > context_size else idx
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
