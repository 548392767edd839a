# expect: correct
# mistake: none (@torch.no_grad() decorator, .max(dim=-1) and unsqueeze(-1) for the new column)
@torch.no_grad()
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context_size:])
        _, next_id = logits[:, -1, :].max(dim=-1)
        idx = torch.cat((idx, next_id.unsqueeze(-1)), dim=1)
    return idx
