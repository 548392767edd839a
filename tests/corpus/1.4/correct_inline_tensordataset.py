# expect: correct
# mistake: none (does not use GPTDatasetV1: builds the windows inline and wraps them in a TensorDataset)
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    from torch.utils.data import TensorDataset

    ids = tiktoken.get_encoding("gpt2").encode(txt, allowed_special={"<|endoftext|>"})
    starts = range(0, len(ids) - max_length, stride)
    inputs = torch.tensor([ids[s:s + max_length] for s in starts], dtype=torch.long).reshape(-1, max_length)
    targets = torch.tensor([ids[s + 1:s + max_length + 1] for s in starts], dtype=torch.long).reshape(-1, max_length)
    return DataLoader(TensorDataset(inputs, targets), batch_size=batch_size, shuffle=shuffle,
                      drop_last=drop_last, num_workers=num_workers)
