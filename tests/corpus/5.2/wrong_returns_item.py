# expect: wrong
# mistake: returns loss.item(), a Python float, so the training loop cannot call backward() on it.
# keywords: tensor, item, graph, backward
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    return loss.item()
