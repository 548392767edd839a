# expect: correct
# mistake: none (a dict with keys "model" and "optim" plus an epoch-free format tag; map_location=torch.device("cpu"); returns nothing)
def save_checkpoint(model, optimizer, path):
    checkpoint = {"format": 1, "model": model.state_dict(), "optim": optimizer.state_dict()}
    torch.save(checkpoint, path)


def load_checkpoint(path, model, optimizer=None):
    checkpoint = torch.load(path, map_location=torch.device("cpu"), weights_only=True)
    model.load_state_dict(checkpoint["model"])
    if optimizer:
        optimizer.load_state_dict(checkpoint["optim"])
