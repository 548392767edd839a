# expect: correct
# mistake: none (zip with a range to stop early, counts the batches it used and divides by that count)
def calc_loss_loader(data_loader, model, device, num_batches=None):
    limit = len(data_loader) if num_batches is None else num_batches
    total, count = 0.0, 0
    for _, (input_batch, target_batch) in zip(range(limit), data_loader):
        total += calc_loss_batch(input_batch, target_batch, model, device).item()
        count += 1
    return total / count if count > 0 else float("nan")
