# expect: wrong
# mistake: passes batch_size, shuffle and drop_last on to the DataLoader but not num_workers, so the loader always loads with the main process alone.
# keywords: num_workers
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
