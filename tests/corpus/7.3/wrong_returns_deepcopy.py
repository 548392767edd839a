# expect: wrong
# mistake: edits and returns a copy.deepcopy of the model, leaving the model passed in unchanged.
# keywords: in place
import copy


def add_classification_head(model, num_classes, emb_dim):
    classifier = copy.deepcopy(model)
    for param in classifier.parameters():
        param.requires_grad = False
    classifier.out_head = nn.Linear(emb_dim, num_classes)
    for param in classifier.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in classifier.final_norm.parameters():
        param.requires_grad = True
    return classifier
