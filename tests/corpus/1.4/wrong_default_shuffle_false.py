# expect: wrong
# mistake: the signature says shuffle=False instead of shuffle=True (everything is passed on correctly; only the default differs).
# keywords: default, shuffle=True
# absent: pass shuffle=shuffle
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=False, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                      drop_last=drop_last, num_workers=num_workers)
