# expect: wrong
# mistake: moves input_batch to `device` but forgets target_batch, which stays on the CPU while the logits are on the model's device.
# keywords: target_batch.to(device), move the targets, targets
# absent: register_buffer
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    logits = model(input_batch)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    return loss
