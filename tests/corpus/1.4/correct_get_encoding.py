# expect: correct
# mistake: none (the course's get_encoding() instead of tiktoken.get_encoding("gpt2"), keyword arguments for the dataset)
def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128,
                         shuffle=True, drop_last=True, num_workers=0):
    dataset = GPTDatasetV1(txt=txt, tokenizer=get_encoding(), max_length=max_length, stride=stride)
    return DataLoader(dataset, batch_size, shuffle=shuffle, drop_last=drop_last, num_workers=num_workers)
