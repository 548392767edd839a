# expect: correct
# mistake: none (each row made on device with torch.tensor(..., device=device) and masked there with torch.nonzero; the cut under "if allowed_max_length:", the same for every positive length)
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    max_len = max(len(x) for x in batch) + 1
    xs, ys = [], []
    for x in batch:
        padded = torch.tensor(x + [pad_token_id] * (max_len - len(x)), dtype=torch.long, device=device)
        inp, tgt = padded[:-1], padded[1:].clone()
        pad_positions = torch.nonzero(tgt == pad_token_id, as_tuple=True)[0]
        tgt[pad_positions[1:]] = ignore_index
        if allowed_max_length:
            inp, tgt = inp[:allowed_max_length], tgt[:allowed_max_length]
        xs.append(inp)
        ys.append(tgt)
    return torch.stack(xs), torch.stack(ys)
