"""What several chapters' reference-value tests share (tests/chapters/test_chNN.py): the book's
toy input and the ways its numbers are compared."""
import torch

# The book's six 3-dimensional embeddings of "Your journey starts with one step" (chapters 02, 03).
TOY = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                    [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])


def close(actual, expected, atol=1e-4):
    """The book prints four decimals: equal to those, within atol."""
    return torch.allclose(torch.as_tensor(actual, dtype=torch.float32), torch.tensor(expected), atol=atol)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())
