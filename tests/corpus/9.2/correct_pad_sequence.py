# expect: correct
# mistake: none (torch.nn.utils.rnn.pad_sequence pads to the longest entry, then one extra column of pad_token_id; the mask with torch.where)
from torch.nn.utils.rnn import pad_sequence


def custom_collate_fn(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None, device="cpu"):
    sequences = [torch.tensor(item, dtype=torch.long) for item in batch]
    padded = pad_sequence(sequences, batch_first=True, padding_value=pad_token_id)
    extra = torch.full((len(batch), 1), pad_token_id, dtype=torch.long)
    padded = torch.cat([padded, extra], dim=1)

    inputs = padded[:, :-1]
    targets = padded[:, 1:]
    pads = targets == pad_token_id
    first_pad = pads.int().argmax(dim=1, keepdim=True)  # every row has at least one padding token
    positions = torch.arange(targets.shape[1]).unsqueeze(0)
    targets = torch.where(pads & (positions > first_pad), torch.full_like(targets, ignore_index), targets)

    if allowed_max_length is not None:
        inputs = inputs[:, :allowed_max_length]
        targets = targets[:, :allowed_max_length]
    return inputs.to(device), targets.to(device)
