# expect: wrong
# mistake: writes model.state_dict without the parentheses, so the checkpoint holds the bound method (and through it the whole pickled model) instead of the tensors; weights_only=True refuses it.
# keywords: state_dict(), parentheses, method
# absent: will likely succeed
def save_checkpoint(model, optimizer, path):
    torch.save({"model_state_dict": model.state_dict,
                "optimizer_state_dict": optimizer.state_dict()}, path)


def load_checkpoint(path, model, optimizer=None):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return model, optimizer
