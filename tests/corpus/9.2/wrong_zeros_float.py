# expect: wrong
# mistake: preallocates the batch with torch.zeros((rows, length)) without a dtype (float32) and fills it.
# keywords: torch.long, integer
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    padded = torch.zeros((len(batch), length))
    for row, item in enumerate(batch):
        padded[row] = torch.tensor(item + [pad_token_id] * (length - len(item)))
    inputs, targets = padded[:, :-1], padded[:, 1:].clone()
    for row, item in enumerate(batch):
        targets[row, len(item):] = ignore_index
    if allowed_max_length is not None:
        inputs, targets = inputs[:, :allowed_max_length], targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
