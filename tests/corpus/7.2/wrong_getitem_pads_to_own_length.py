# expect: wrong
# mistake: tokenizes in __getitem__, and with max_length=None keeps self.max_length = None there, so each message is cut to nothing and padded to its own length: items of different lengths that a DataLoader cannot stack.
# keywords: longest message, common length, same number
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.pad_token_id = pad_token_id

    def __getitem__(self, index):
        ids = self.tokenizer.encode(self.data["Text"].iloc[index])
        length = self.max_length if self.max_length is not None else len(ids)
        ids = ids[:length] + [self.pad_token_id] * (length - len(ids))
        return torch.tensor(ids, dtype=torch.long), torch.tensor(self.data["Label"].iloc[index])

    def __len__(self):
        return len(self.data)
