# expect: correct
# mistake: none (pads every list with max_length pad ids and then slices to max_length, which cuts and pads in one step; the label via .loc on read_csv's 0, 1, 2, ... index)
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        encoded = self.data["Text"].apply(tokenizer.encode).tolist()
        self.max_length = max_length or max(len(ids) for ids in encoded)
        self.encoded_texts = [(ids + [pad_token_id] * self.max_length)[:self.max_length] for ids in encoded]

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, idx):
        label = self.data.loc[idx, "Label"]
        return torch.tensor(self.encoded_texts[idx], dtype=torch.long), torch.tensor(label)
