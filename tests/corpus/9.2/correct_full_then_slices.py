# expect: correct
# mistake: none (one torch.full tensor of the padded batch, rows filled by slicing; the targets masked by position, since no entry holds pad_token_id)
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    longest = max(len(item) for item in batch)
    padded = torch.full((len(batch), longest + 1), pad_token_id, dtype=torch.long)
    for row, item in enumerate(batch):
        padded[row, :len(item)] = torch.tensor(item, dtype=torch.long)
    inputs = padded[:, :-1]
    targets = padded[:, 1:].clone()
    for row, item in enumerate(batch):
        # padded[len(item)] is the first padding token, targets[len(item) - 1]; the rest follow it
        targets[row, len(item):] = ignore_index
    if allowed_max_length is not None:
        inputs = inputs[:, :allowed_max_length]
        targets = targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
