# expect: wrong
# mistake: puts the padding in front of the message ([pad_token_id] * n + ids) instead of after it.
# keywords: pad at the end, padding is at the start
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        self.encoded_texts = [tokenizer.encode(text) for text in self.data["Text"]]
        if max_length is None:
            self.max_length = max(len(ids) for ids in self.encoded_texts)
        else:
            self.max_length = max_length
            self.encoded_texts = [ids[:self.max_length] for ids in self.encoded_texts]
        self.encoded_texts = [[pad_token_id] * (self.max_length - len(ids)) + ids for ids in self.encoded_texts]

    def __getitem__(self, index):
        encoded = self.encoded_texts[index]
        label = self.data.iloc[index]["Label"]
        return torch.tensor(encoded, dtype=torch.long), torch.tensor(label, dtype=torch.long)

    def __len__(self):
        return len(self.data)
