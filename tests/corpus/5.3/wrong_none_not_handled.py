# expect: wrong
# mistake: always computes min(num_batches, len(data_loader)) without handling the default num_batches=None, which raises a TypeError.
# keywords: num_batches=none, is none, all batches, all the batches
def calc_loss_loader(data_loader, model, device, num_batches=None):
    if len(data_loader) == 0:
        return float("nan")
    num_batches = min(num_batches, len(data_loader))
    total_loss = 0.0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        loss = calc_loss_batch(input_batch, target_batch, model, device)
        total_loss += loss.item()
    return total_loss / num_batches
