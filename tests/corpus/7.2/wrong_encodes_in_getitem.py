# expect: wrong
# mistake: keeps the texts and the tokenizer, and encodes, cuts and pads a message every time an item is read (the longest message found by encoding them all once in __init__): the items are right, but every epoch encodes every message again instead of once.
# keywords: encoded again, once, __init__
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        self.tokenizer = tokenizer
        self.pad_token_id = pad_token_id
        if max_length is None:
            max_length = max(len(tokenizer.encode(text)) for text in self.data["Text"])
        self.max_length = max_length

    def __getitem__(self, index):
        ids = self.tokenizer.encode(self.data["Text"].iloc[index])[:self.max_length]
        ids = ids + [self.pad_token_id] * (self.max_length - len(ids))
        return torch.tensor(ids, dtype=torch.long), torch.tensor(self.data["Label"].iloc[index], dtype=torch.long)

    def __len__(self):
        return len(self.data)
