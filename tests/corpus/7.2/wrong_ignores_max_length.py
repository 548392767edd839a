# expect: wrong
# mistake: always pads to the longest message of the file and ignores a given max_length (neither cutting to it nor padding up to it).
# keywords: max_length=, exactly max_length
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        self.encoded_texts = [tokenizer.encode(text) for text in self.data["Text"]]
        self.max_length = max(len(ids) for ids in self.encoded_texts)
        self.encoded_texts = [ids + [pad_token_id] * (self.max_length - len(ids)) for ids in self.encoded_texts]

    def __getitem__(self, index):
        encoded = self.encoded_texts[index]
        label = self.data.iloc[index]["Label"]
        return torch.tensor(encoded, dtype=torch.long), torch.tensor(label, dtype=torch.long)

    def __len__(self):
        return len(self.data)
