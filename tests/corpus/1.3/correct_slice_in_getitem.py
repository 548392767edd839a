# expect: correct
# mistake: none (stores the ids and the window starts, slices in __getitem__ and returns torch.long tensors)
class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        super().__init__()
        self.ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        self.max_length = max_length
        self.starts = list(range(0, len(self.ids) - max_length, stride))

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, idx):
        s = self.starts[idx]
        chunk = self.ids[s:s + self.max_length + 1]
        return (torch.tensor(chunk[:-1], dtype=torch.long),
                torch.tensor(chunk[1:], dtype=torch.long))
