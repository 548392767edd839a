# expect: wrong
# mistake: replaces every padding token of the targets by ignore_index, the first one too (torch.where over the whole row).
# keywords: first padding token, must stay
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    padded = torch.tensor([item + [pad_token_id] * (length - len(item)) for item in batch])
    inputs = padded[:, :-1]
    targets = padded[:, 1:]
    targets = torch.where(targets == pad_token_id, torch.full_like(targets, ignore_index), targets)
    if allowed_max_length is not None:
        inputs = inputs[:, :allowed_max_length]
        targets = targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
