# expect: wrong
# mistake: does not cap num_batches with min(num_batches, len(data_loader)): when more batches are asked for than the loader has, the loop stops early but the sum is still divided by num_batches.
# keywords: min(num_batches, more batches than
def calc_loss_loader(data_loader, model, device, num_batches=None):
    if len(data_loader) == 0:
        return float("nan")
    if num_batches is None:
        num_batches = len(data_loader)
    total_loss = 0.0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        total_loss += calc_loss_batch(input_batch, target_batch, model, device).item()
    return total_loss / num_batches
