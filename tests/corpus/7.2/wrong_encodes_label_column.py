# expect: wrong
# mistake: takes the texts by position with self.data.iloc[:, 0], thinking the text comes first, and encodes the labels as strings ("0", "1") instead of the messages.
# keywords: text of the row, encode the text, text column
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        self.encoded_texts = [tokenizer.encode(str(text)) for text in self.data.iloc[:, 0]]
        if max_length is None:
            self.max_length = max(len(ids) for ids in self.encoded_texts)
        else:
            self.max_length = max_length
            self.encoded_texts = [ids[:self.max_length] for ids in self.encoded_texts]
        self.encoded_texts = [ids + [pad_token_id] * (self.max_length - len(ids)) for ids in self.encoded_texts]

    def __getitem__(self, index):
        encoded = self.encoded_texts[index]
        label = self.data["Label"].iloc[index]
        return torch.tensor(encoded, dtype=torch.long), torch.tensor(label, dtype=torch.long)

    def __len__(self):
        return len(self.data)
