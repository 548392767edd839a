# expect: wrong
# mistake: replaces the layers in a copy.deepcopy of the model and returns it: the model passed in is left as it was.
# keywords: in place
# absent: recurse
import copy


def replace_linear_with_lora(model, rank, alpha):
    new_model = copy.deepcopy(model)
    for name, module in list(new_model.named_modules()):
        if isinstance(module, nn.Linear):
            parent_name, _, child_name = name.rpartition(".")
            parent = new_model.get_submodule(parent_name) if parent_name else new_model
            setattr(parent, child_name, LinearWithLoRA(module, rank, alpha))
    return new_model
