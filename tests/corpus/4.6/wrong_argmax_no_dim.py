# expect: wrong
# mistake: calls torch.argmax(logits) with no dim, which returns one index into the flattened (batch * vocab) logits; reshaped to (1, 1) it works for batch 1 only.
# keywords: dim=-1, batch, argmax
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits).reshape(1, 1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
