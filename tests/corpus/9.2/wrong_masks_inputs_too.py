# expect: wrong
# mistake: masks the padding after the first token in the inputs as well as in the targets (ignore_index in the inputs).
# keywords: only the targets
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    all_inputs, all_targets = [], []
    for item in batch:
        padded = item + [pad_token_id] + [ignore_index] * (length - len(item) - 1)
        inputs, targets = padded[:-1], padded[1:]
        if allowed_max_length is not None:
            inputs, targets = inputs[:allowed_max_length], targets[:allowed_max_length]
        all_inputs.append(inputs)
        all_targets.append(targets)
    return torch.tensor(all_inputs).to(device), torch.tensor(all_targets).to(device)
