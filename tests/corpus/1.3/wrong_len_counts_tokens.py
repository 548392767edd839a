# expect: wrong
# mistake: keeps the token ids and makes the windows in __getitem__ (fine), but __len__ returns the number of tokens, len(self.token_ids), instead of the number of windows.
# keywords: len, windows
class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        self.token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        self.max_length = max_length
        self.stride = stride

    def __len__(self):
        return len(self.token_ids)

    def __getitem__(self, idx):
        start = idx * self.stride
        x = self.token_ids[start:start + self.max_length]
        y = self.token_ids[start + 1:start + self.max_length + 1]
        return torch.tensor(x), torch.tensor(y)
