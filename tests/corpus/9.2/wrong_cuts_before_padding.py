# expect: wrong
# mistake: cuts every entry to allowed_max_length before padding and shifting, so a long entry's last target becomes an end-of-text token.
# keywords: before padding, pad and shift first
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    if allowed_max_length is not None:
        batch = [item[:allowed_max_length] for item in batch]
    batch_max_length = max(len(item) + 1 for item in batch)
    inputs_lst, targets_lst = [], []
    for item in batch:
        padded = item + [pad_token_id] * (batch_max_length - len(item))
        inputs = torch.tensor(padded[:-1])
        targets = torch.tensor(padded[1:])
        indices = torch.nonzero(targets == pad_token_id).flatten()
        if indices.numel() > 1:
            targets[indices[1:]] = ignore_index
        inputs_lst.append(inputs)
        targets_lst.append(targets)
    return torch.stack(inputs_lst).to(device), torch.stack(targets_lst).to(device)
