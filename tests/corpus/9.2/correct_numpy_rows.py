# expect: correct
# mistake: none (a NumPy int64 array filled with pad_token_id, masked per row with a slice, turned into tensors with torch.from_numpy)
import numpy as np


def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    length = max(len(item) for item in batch) + 1
    padded = np.full((len(batch), length), pad_token_id, dtype=np.int64)
    for i, item in enumerate(batch):
        padded[i, :len(item)] = item
    inputs = padded[:, :-1].copy()
    targets = padded[:, 1:].copy()
    for i, item in enumerate(batch):
        targets[i, len(item):] = ignore_index
    if allowed_max_length is not None:
        inputs, targets = inputs[:, :allowed_max_length], targets[:, :allowed_max_length]
    return torch.from_numpy(inputs).to(device), torch.from_numpy(targets).to(device)
