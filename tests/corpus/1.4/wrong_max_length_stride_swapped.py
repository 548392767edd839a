# expect: wrong
# mistake: passes stride and max_length to GPTDatasetV1 in the wrong order, GPTDatasetV1(txt, tokenizer, stride, max_length).
# keywords: swapped, max_length, stride
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, stride, max_length)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                      drop_last=drop_last, num_workers=num_workers)
