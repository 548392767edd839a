# expect: correct
# mistake: none (vectorised: torch.full without a dtype, which an int fill value makes int64; the padding after the first found with a cumulative sum over each row)
def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    width = max(map(len, batch)) + 1
    padded = torch.full((len(batch), width), pad_token_id)
    for i, ids in enumerate(batch):
        padded[i, :len(ids)] = torch.as_tensor(ids)
    inputs, targets = padded[:, :-1], padded[:, 1:].clone()
    is_pad = targets == pad_token_id
    later_pads = is_pad & (is_pad.cumsum(dim=1) > 1)
    targets = targets.masked_fill(later_pads, ignore_index)
    if allowed_max_length is not None:
        inputs, targets = inputs[:, :allowed_max_length], targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
