# expect: wrong
# mistake: pads and shifts but never replaces the padding of the targets by ignore_index.
# keywords: ignore_index, every padding token was kept
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    batch_max_length = max(len(item) + 1 for item in batch)
    inputs_lst, targets_lst = [], []
    for item in batch:
        padded = list(item) + [pad_token_id] * (batch_max_length - len(item))
        inputs_lst.append(padded[:-1])
        targets_lst.append(padded[1:])
    inputs = torch.tensor(inputs_lst)
    targets = torch.tensor(targets_lst)
    if allowed_max_length is not None:
        inputs = inputs[:, :allowed_max_length]
        targets = targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
