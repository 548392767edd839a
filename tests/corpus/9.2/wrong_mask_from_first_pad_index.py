# expect: wrong
# mistake: masks from the first padding position on (targets[indices] instead of targets[indices[1:]]), so the end-of-text target is lost too.
# keywords: first padding token, must stay
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    batch_max_length = max(len(item) + 1 for item in batch)
    inputs_lst, targets_lst = [], []
    for item in batch:
        padded = item.copy() + [pad_token_id] * (batch_max_length - len(item))
        inputs = torch.tensor(padded[:-1])
        targets = torch.tensor(padded[1:])
        indices = torch.nonzero(targets == pad_token_id).flatten()
        targets[indices] = ignore_index
        if allowed_max_length is not None:
            inputs = inputs[:allowed_max_length]
            targets = targets[:allowed_max_length]
        inputs_lst.append(inputs)
        targets_lst.append(targets)
    return torch.stack(inputs_lst).to(device), torch.stack(targets_lst).to(device)
