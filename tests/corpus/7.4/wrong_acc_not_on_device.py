# expect: wrong
# mistake: never moves the batches to device: right on the CPU only, but the ids stay on the CPU when the model is on a GPU (caught on the meta device).
# keywords: .to(device), move the batch
def calc_loss_batch_cls(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)[:, -1, :]
    return torch.nn.functional.cross_entropy(logits, target_batch)


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    model.eval()
    if num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
    correct, total = 0, 0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        with torch.no_grad():
            predicted = model(input_batch)[:, -1, :].argmax(dim=-1)
        correct += (predicted == target_batch).sum().item()
        total += predicted.shape[0]
    return correct / total
