# expect: wrong
# mistake: reads the file with pd.read_csv(csv_file, header=None) and names the columns itself, so the header line "Label,Text" becomes a message of its own.
# keywords: header, number of messages
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file, header=None, names=["Label", "Text"])
        self.encoded_texts = [tokenizer.encode(text) for text in self.data["Text"]]
        if max_length is None:
            self.max_length = max(len(ids) for ids in self.encoded_texts)
        else:
            self.max_length = max_length
            self.encoded_texts = [ids[:self.max_length] for ids in self.encoded_texts]
        self.encoded_texts = [ids + [pad_token_id] * (self.max_length - len(ids)) for ids in self.encoded_texts]

    def __getitem__(self, index):
        label = int(self.data["Label"].iloc[index])
        return torch.tensor(self.encoded_texts[index], dtype=torch.long), label

    def __len__(self):
        return len(self.data)
