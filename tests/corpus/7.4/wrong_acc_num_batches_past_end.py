# expect: wrong
# mistake: walks the loader with next() num_batches times without capping it at len(data_loader), so it crashes (StopIteration) when num_batches is larger than the loader.
# keywords: min(num_batches, len(data_loader)), larger than the loader
def calc_loss_batch_cls(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)[:, -1, :]
    return torch.nn.functional.cross_entropy(logits, target_batch)


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    model.eval()
    if num_batches is None:
        num_batches = len(data_loader)
    batches = iter(data_loader)
    correct, total = 0, 0
    for _ in range(num_batches):
        input_batch, target_batch = next(batches)
        input_batch, target_batch = input_batch.to(device), target_batch.to(device)
        with torch.no_grad():
            predicted = model(input_batch)[:, -1, :].argmax(dim=-1)
        correct += (predicted == target_batch).sum().item()
        total += predicted.shape[0]
    return correct / total
