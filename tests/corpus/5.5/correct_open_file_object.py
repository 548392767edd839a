# expect: correct
# mistake: none (writes and reads through open file objects; checks the optimizer with `is None`, returns the model)
def save_checkpoint(model, optimizer, path):
    with open(path, "wb") as f:
        torch.save({"model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict()}, f)


def load_checkpoint(path, model, optimizer=None):
    with open(path, "rb") as f:
        checkpoint = torch.load(f, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    if optimizer is None:
        return model
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return model
