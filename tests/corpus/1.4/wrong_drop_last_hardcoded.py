# expect: wrong
# mistake: copies the DataLoader call of a training script with drop_last=True written out, so drop_last=False is ignored.
# keywords: drop_last
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                      drop_last=True, num_workers=num_workers)
