# expect: correct
# mistake: none (builds one (messages, length) tensor filled with pad_token_id in __init__ and copies each message's first ids into its row; labels as one long tensor, indexed into 0-d tensors)
class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        data = pd.read_csv(csv_file)
        encoded = [tokenizer.encode(text) for text in data["Text"].tolist()]
        if max_length is None:
            max_length = max(map(len, encoded))
        self.max_length = max_length
        self.token_ids = torch.full((len(encoded), max_length), pad_token_id, dtype=torch.long)
        for row, ids in enumerate(encoded):
            ids = ids[:max_length]
            self.token_ids[row, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        self.labels = torch.tensor(data["Label"].to_numpy(), dtype=torch.long)

    def __getitem__(self, index):
        return self.token_ids[index], self.labels[index]

    def __len__(self):
        return self.token_ids.shape[0]
