# expect: wrong
# mistake: loads with torch.load(path, weights_only=False), which unpickles arbitrary objects, so a tampered checkpoint runs its code.
# keywords: weights_only
def save_checkpoint(model, optimizer, path):
    torch.save({"model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict()}, path)


def load_checkpoint(path, model, optimizer=None):
    checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    model.load_state_dict(checkpoint["model_state_dict"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return model, optimizer
