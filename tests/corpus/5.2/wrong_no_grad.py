# expect: wrong
# mistake: runs the model under torch.no_grad() (as in generate_text_simple), so the returned loss has no graph and backward() fails.
# keywords: no_grad, graph, backward, grad_fn
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    with torch.no_grad():
        logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
