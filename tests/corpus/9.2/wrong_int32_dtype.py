# expect: wrong
# mistake: asks for dtype=torch.int (int32) rather than torch.long.
# keywords: torch.long
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    padded = torch.full((len(batch), length), pad_token_id, dtype=torch.int)
    for row, item in enumerate(batch):
        padded[row, :len(item)] = torch.tensor(item, dtype=torch.int)
    inputs, targets = padded[:, :-1], padded[:, 1:].clone()
    for row, item in enumerate(batch):
        targets[row, len(item):] = ignore_index
    if allowed_max_length is not None:
        inputs, targets = inputs[:, :allowed_max_length], targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
