# expect: wrong
# mistake: takes the argmax without keepdim=True and reshapes it with idx_next.view(1, -1), which gives (1, batch): right for batch 1, a shape error for a larger batch.
# keywords: keepdim, (batch, 1), batch
# neighbour-of: wrong_argmax_dim0
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1)
        idx_next = idx_next.view(1, -1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
