# expect: wrong
# mistake: saves both states but load_checkpoint never calls optimizer.load_state_dict, so a given optimizer keeps its fresh state.
# keywords: optimizer.load_state_dict, optimizer's state
def save_checkpoint(model, optimizer, path):
    torch.save({"model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict()}, path)


def load_checkpoint(path, model, optimizer=None):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    return model, optimizer
