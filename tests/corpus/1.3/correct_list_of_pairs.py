# expect: correct
# mistake: none (one list of (input, target) pairs, a while loop and torch.LongTensor)
class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        self.samples = []
        start = 0
        while start + max_length < len(token_ids):
            x = torch.LongTensor(token_ids[start:start + max_length])
            y = torch.LongTensor(token_ids[start + 1:start + max_length + 1])
            self.samples.append((x, y))
            start += stride

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        return self.samples[idx]
