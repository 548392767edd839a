# expect: wrong
# mistake: pads with item.append(pad_token_id) in a while loop, which grows the data set's lists.
# keywords: were changed, padded in place
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    inputs, targets = [], []
    for item in batch:
        while len(item) < length:
            item.append(pad_token_id)
        row_targets = item[1:]
        first = row_targets.index(pad_token_id)
        row_targets = row_targets[:first + 1] + [ignore_index] * (len(row_targets) - first - 1)
        inputs.append(item[:-1])
        targets.append(row_targets)
    inputs = torch.tensor(inputs)
    targets = torch.tensor(targets)
    if allowed_max_length is not None:
        inputs, targets = inputs[:, :allowed_max_length], targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
