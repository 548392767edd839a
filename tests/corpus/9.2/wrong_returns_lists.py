# expect: wrong
# mistake: returns the padded, shifted and masked rows as Python lists, without making tensors of them.
# keywords: should be a tensor
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    all_inputs, all_targets = [], []
    for item in batch:
        padded = item + [pad_token_id] * (length - len(item))
        inputs, targets = padded[:-1], padded[1:]
        first = targets.index(pad_token_id)
        targets = targets[:first + 1] + [ignore_index] * (len(targets) - first - 1)
        if allowed_max_length is not None:
            inputs, targets = inputs[:allowed_max_length], targets[:allowed_max_length]
        all_inputs.append(inputs)
        all_targets.append(targets)
    return all_inputs, all_targets
