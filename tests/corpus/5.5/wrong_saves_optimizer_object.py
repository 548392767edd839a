# expect: wrong
# mistake: saves the optimizer object itself instead of optimizer.state_dict(), so torch.load(..., weights_only=True) refuses the file.
# keywords: state_dict, optimizer.state_dict()
# absent: will likely succeed
def save_checkpoint(model, optimizer, path):
    torch.save({"model_state_dict": model.state_dict(),
                "optimizer": optimizer}, path)


def load_checkpoint(path, model, optimizer=None):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer"].state_dict())
    return model, optimizer
