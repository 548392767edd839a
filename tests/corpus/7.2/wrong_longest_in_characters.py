# expect: wrong
# mistake: with max_length=None it takes the length of the longest message in characters (len(text)) rather than in tokens, so every message is padded far too long.
# keywords: in tokens, longest message
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        if max_length is None:
            max_length = max(len(text) for text in self.data["Text"])
        self.max_length = max_length
        self.encoded_texts = []
        for text in self.data["Text"]:
            ids = tokenizer.encode(text)[:max_length]
            self.encoded_texts.append(ids + [pad_token_id] * (max_length - len(ids)))

    def __getitem__(self, index):
        encoded = self.encoded_texts[index]
        label = self.data.iloc[index]["Label"]
        return torch.tensor(encoded, dtype=torch.long), torch.tensor(label, dtype=torch.long)

    def __len__(self):
        return len(self.data)
