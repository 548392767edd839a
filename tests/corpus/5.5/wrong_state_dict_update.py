# expect: wrong
# mistake: restores the model with model.state_dict().update(...), which only changes a freshly built dict, not the model's parameters (load_state_dict is needed).
# keywords: load_state_dict
def save_checkpoint(model, optimizer, path):
    torch.save({"model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict()}, path)


def load_checkpoint(path, model, optimizer=None):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.state_dict().update(checkpoint["model_state_dict"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return model, optimizer
