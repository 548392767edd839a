# expect: wrong
# mistake: ignores the device argument and picks the device itself ("cuda" if torch.cuda.is_available() else "cpu").
# keywords: .to(device)
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    target_device = "cuda" if torch.cuda.is_available() else "cpu"
    length = max(len(item) for item in batch) + 1
    inputs_lst, targets_lst = [], []
    for item in batch:
        padded = item + [pad_token_id] * (length - len(item))
        targets = padded[1:]
        first = targets.index(pad_token_id)
        targets = targets[:first + 1] + [ignore_index] * (len(targets) - first - 1)
        inputs_lst.append(padded[:-1])
        targets_lst.append(targets)
    inputs = torch.tensor(inputs_lst, device=target_device)
    targets = torch.tensor(targets_lst, device=target_device)
    if allowed_max_length is not None:
        inputs, targets = inputs[:, :allowed_max_length], targets[:, :allowed_max_length]
    return inputs, targets
