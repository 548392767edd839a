# expect: wrong
# mistake: masks by position from len(item) + 1 on, one place too late: the targets keep two padding tokens.
# keywords: after the first
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    inputs_lst, targets_lst = [], []
    for item in batch:
        padded = item + [pad_token_id] * (length - len(item))
        inputs = padded[:-1]
        targets = padded[1:]
        for j in range(len(item) + 1, len(targets)):
            targets[j] = ignore_index
        if allowed_max_length is not None:
            inputs, targets = inputs[:allowed_max_length], targets[:allowed_max_length]
        inputs_lst.append(inputs)
        targets_lst.append(targets)
    return torch.tensor(inputs_lst).to(device), torch.tensor(targets_lst).to(device)
