# expect: wrong
# mistake: averages the accuracies of the batches, so a smaller last batch counts as much as a full one.
# keywords: number of messages, smaller last batch, messages seen
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
    accuracies = []
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        input_batch, target_batch = input_batch.to(device), target_batch.to(device)
        with torch.no_grad():
            predicted = model(input_batch)[:, -1, :].argmax(dim=-1)
        accuracies.append((predicted == target_batch).float().mean().item())
    return sum(accuracies) / len(accuracies)
