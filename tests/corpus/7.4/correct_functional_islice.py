# expect: correct
# mistake: none (F.cross_entropy; the accuracy takes the first num_batches batches with itertools.islice, under torch.inference_mode, counting with tensors and converting once at the end)
import torch.nn.functional as F


def calc_loss_batch_cls(input_batch, target_batch, model, device):
    logits = model(input_batch.to(device))
    return F.cross_entropy(logits[:, -1], target_batch.to(device))


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    from itertools import islice

    model.eval()
    correct = total = 0
    with torch.inference_mode():
        for inputs, targets in islice(data_loader, num_batches):
            predictions = model(inputs.to(device))[:, -1].argmax(-1)
            correct += int((predictions == targets.to(device)).sum())
            total += targets.numel()
    return correct / total
