# expect: wrong
# mistake: always goes through the whole loader and never uses num_batches.
# keywords: num_batches
def calc_loss_batch_cls(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)[:, -1, :]
    return torch.nn.functional.cross_entropy(logits, target_batch)


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    model.eval()
    correct, total = 0, 0
    for input_batch, target_batch in data_loader:
        input_batch, target_batch = input_batch.to(device), target_batch.to(device)
        with torch.no_grad():
            predicted = model(input_batch)[:, -1, :].argmax(dim=-1)
        correct += (predicted == target_batch).sum().item()
        total += len(target_batch)
    return correct / total
