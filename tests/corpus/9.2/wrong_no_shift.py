# expect: wrong
# mistake: returns the padded entries as both inputs and targets (with the mask), without the shift by one token.
# keywords: padded[:-1], padded[1:]
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    batch_max_length = max(len(item) + 1 for item in batch)
    inputs_lst, targets_lst = [], []
    for item in batch:
        padded = list(item) + [pad_token_id] * (batch_max_length - len(item))
        inputs = torch.tensor(padded)
        targets = torch.tensor(padded)
        indices = torch.nonzero(targets == pad_token_id).flatten()
        if indices.numel() > 1:
            targets[indices[1:]] = ignore_index
        if allowed_max_length is not None:
            inputs = inputs[:allowed_max_length]
            targets = targets[:allowed_max_length]
        inputs_lst.append(inputs)
        targets_lst.append(targets)
    return torch.stack(inputs_lst).to(device), torch.stack(targets_lst).to(device)
