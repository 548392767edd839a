# expect: wrong
# mistake: returns the padded ids as the Python list itself, not as a tensor (a DataLoader then builds a list of max_length tensors instead of a (batch, max_length) tensor).
# keywords: tensor, torch.long
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        self.encoded_texts = [tokenizer.encode(text) for text in self.data["Text"]]
        if max_length is None:
            self.max_length = max(len(ids) for ids in self.encoded_texts)
        else:
            self.max_length = max_length
            self.encoded_texts = [ids[:self.max_length] for ids in self.encoded_texts]
        self.encoded_texts = [ids + [pad_token_id] * (self.max_length - len(ids)) for ids in self.encoded_texts]

    def __getitem__(self, index):
        return self.encoded_texts[index], int(self.data["Label"].iloc[index])

    def __len__(self):
        return len(self.data)
