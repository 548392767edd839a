# expect: wrong
# mistake: makes sure there is always at least one window (range(0, max(len(token_ids) - max_length, 1), stride)), so a text shorter than one window gives one window that is too short instead of an empty data set or an error.
# keywords: window that is too short, empty data set
class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        self.input_ids = []
        self.target_ids = []

        token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})

        for i in range(0, max(len(token_ids) - max_length, 1), stride):  # at least one window
            input_chunk = token_ids[i:i + max_length]
            target_chunk = token_ids[i + 1: i + max_length + 1]
            self.input_ids.append(torch.tensor(input_chunk))
            self.target_ids.append(torch.tensor(target_chunk))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]
