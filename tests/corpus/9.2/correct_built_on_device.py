# expect: correct
# mistake: none (every tensor made on device from the start, device=device; F.pad for the padding; the mask from the inputs' padding, which sits one place after the targets' first padding token)
import torch.nn.functional as F


def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    target_length = max(len(item) for item in batch) + 1
    rows = [F.pad(torch.tensor(item, dtype=torch.long, device=device), (0, target_length - len(item)),
                  value=pad_token_id) for item in batch]
    padded = torch.stack(rows)
    inputs = padded[:, :-1]
    targets = padded[:, 1:].clone()
    targets[inputs == pad_token_id] = ignore_index
    if allowed_max_length is not None:
        inputs = inputs[:, :allowed_max_length]
        targets = targets[:, :allowed_max_length]
    return inputs, targets
