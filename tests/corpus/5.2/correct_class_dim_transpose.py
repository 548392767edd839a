# expect: correct
# mistake: none (no flattening: the logits transposed to (batch, vocab_size, num_tokens), cross_entropy's K-dimensional form)
def calc_loss_batch(input_batch, target_batch, model, device):
    logits = model(input_batch.to(device))
    return torch.nn.functional.cross_entropy(logits.transpose(1, 2), target_batch.to(device))
