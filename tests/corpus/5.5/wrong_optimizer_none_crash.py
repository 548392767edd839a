# expect: wrong
# mistake: always calls optimizer.load_state_dict, so load_checkpoint(path, model) with the default optimizer=None fails with an AttributeError.
# keywords: optimizer=none, optimizer is none, is not none, optional
def save_checkpoint(model, optimizer, path):
    torch.save({"model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict()}, path)


def load_checkpoint(path, model, optimizer=None):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return model, optimizer
