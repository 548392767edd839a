# expect: wrong
# mistake: "encodes" the text with txt.encode("utf-8") (the str method, bytes) instead of tokenizer.encode(txt), so the windows hold character bytes, not GPT-2 token ids.
# keywords: tokenizer, tokenizer.encode
class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        self.input_ids = []
        self.target_ids = []
        token_ids = list(txt.encode("utf-8"))
        for i in range(0, len(token_ids) - max_length, stride):
            self.input_ids.append(torch.tensor(token_ids[i:i + max_length]))
            self.target_ids.append(torch.tensor(token_ids[i + 1:i + max_length + 1]))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]
