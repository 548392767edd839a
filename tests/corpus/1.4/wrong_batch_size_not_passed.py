# expect: wrong
# mistake: forgets batch_size=batch_size in the DataLoader call, so every batch holds a single window (DataLoader's default batch_size=1).
# keywords: batch_size
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, shuffle=shuffle, drop_last=drop_last, num_workers=num_workers)
