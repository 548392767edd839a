# expect: correct
# mistake: none (windows of max_length + 1 tokens with Tensor.unfold, split into input and target; no window when the text is too short)
class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        ids = torch.tensor(tokenizer.encode(txt, allowed_special={"<|endoftext|>"}), dtype=torch.long)
        if len(ids) > max_length:
            self.windows = ids.unfold(0, max_length + 1, stride)
        else:
            self.windows = ids.new_empty((0, max_length + 1))

    def __len__(self):
        return self.windows.shape[0]

    def __getitem__(self, idx):
        window = self.windows[idx]
        return window[:-1], window[1:]
