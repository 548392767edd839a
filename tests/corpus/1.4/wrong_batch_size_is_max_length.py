# expect: wrong
# mistake: mixes up the two sizes in the DataLoader call, batch_size=max_length (windows per batch taken from the window length).
# keywords: batch_size
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=max_length, shuffle=shuffle,
                      drop_last=drop_last, num_workers=num_workers)
