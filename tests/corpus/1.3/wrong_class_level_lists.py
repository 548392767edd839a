# expect: wrong
# mistake: declares input_ids = [] and target_ids = [] as class attributes instead of in __init__, so every dataset appends to the same two lists: the second dataset made also holds the first one's windows.
# keywords: len, class attribute, self.input_ids
class GPTDatasetV1(Dataset):
    input_ids = []
    target_ids = []

    def __init__(self, txt, tokenizer, max_length, stride):
        token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        for i in range(0, len(token_ids) - max_length, stride):
            self.input_ids.append(torch.tensor(token_ids[i:i + max_length]))
            self.target_ids.append(torch.tensor(token_ids[i + 1:i + max_length + 1]))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]
