# expect: wrong
# mistake: keeps a fixed-size window and shifts it in place (window[:, :-1] = window[:, 1:].clone(); window[:, -1:] = idx_next), but when idx already holds context_size tokens or more the window is a view of idx, so the caller's tensor is overwritten (the returned ids are right).
# keywords: in place, in-place, input
def generate_text_simple(model, idx, max_new_tokens, context_size):
    window = idx[:, -context_size:]
    out = idx
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(window)
        idx_next = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
        out = torch.cat((out, idx_next), dim=1)
        if window.shape[1] < context_size:
            window = torch.cat((window, idx_next), dim=1)
        else:
            window[:, :-1] = window[:, 1:].clone()
            window[:, -1:] = idx_next
    return out
