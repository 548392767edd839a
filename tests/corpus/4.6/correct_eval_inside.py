# expect: correct
# mistake: none (calls model.eval() itself before generating, which the task leaves to the caller but accepts)
def generate_text_simple(model, idx, max_new_tokens, context_size):
    model.eval()
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        idx = torch.cat((idx, logits.argmax(dim=-1, keepdim=True)), dim=1)
    return idx
