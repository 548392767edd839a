# expect: correct
# mistake: none (reads the file with the csv module, newline="" so quoted line breaks stay inside a message; stores lists and returns the label as a Python int)
import csv


class SpamDataset(Dataset):
    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        with open(csv_file, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        self.labels = [int(row["Label"]) for row in rows]
        encoded = [tokenizer.encode(row["Text"]) for row in rows]
        self.max_length = max_length if max_length is not None else max(len(ids) for ids in encoded)
        self.encoded_texts = []
        for ids in encoded:
            ids = ids[:self.max_length]
            self.encoded_texts.append(ids + [pad_token_id] * (self.max_length - len(ids)))

    def __getitem__(self, index):
        return torch.tensor(self.encoded_texts[index]), self.labels[index]

    def __len__(self):
        return len(self.labels)
