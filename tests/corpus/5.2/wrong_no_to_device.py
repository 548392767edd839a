# expect: wrong
# mistake: never moves the batches to `device`, so they stay on the CPU while the model runs elsewhere (works only when device is the CPU).
# keywords: .to(device), move the batch
def calc_loss_batch(input_batch, target_batch, model, device):
    logits = model(input_batch)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    return loss
