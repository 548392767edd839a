# expect: wrong
# mistake: uses the pad_token_id argument but writes the mask value as -100 instead of ignore_index.
# keywords: use the argument
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    padded = torch.full((len(batch), length), pad_token_id, dtype=torch.long)
    for row, item in enumerate(batch):
        padded[row, :len(item)] = torch.tensor(item)
    inputs, targets = padded[:, :-1], padded[:, 1:].clone()
    for row, item in enumerate(batch):
        targets[row, len(item):] = -100
    if allowed_max_length is not None:
        inputs, targets = inputs[:, :allowed_max_length], targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
