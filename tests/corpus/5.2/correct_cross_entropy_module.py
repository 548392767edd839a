# expect: correct
# mistake: none (nn.CrossEntropyLoss() module with reshape; moves the batches with device= keyword)
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device=device)
    target_batch = target_batch.to(device=device)
    logits = model(input_batch)
    loss_fn = nn.CrossEntropyLoss()
    return loss_fn(logits.reshape(-1, logits.shape[-1]), target_batch.reshape(-1))
