# expect: wrong
# mistake: calls torch.save twice on the same path (model state, then optimizer state), so the second file overwrites the first and loading reads the optimizer's state into the model.
# keywords: overwrit, one file, same file, one dict, one key, under another
def save_checkpoint(model, optimizer, path):
    torch.save(model.state_dict(), path)
    torch.save(optimizer.state_dict(), path)


def load_checkpoint(path, model, optimizer=None):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    if optimizer is not None:
        optimizer.load_state_dict(state)
    return model, optimizer
