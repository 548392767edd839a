"""The GPU and fork(): a CUDA driver initialised in the host before it forks is unusable in its
children ("CUDA error: initialization error" on every CUDA task), so nothing the host runs
before fork() may touch the GPU. These tell what may be done, and check that it was not."""


def gpu_backend_built():
    """Whether this torch was built with a GPU backend (CUDA or ROCm, MPS, XPU), whether or not a
    GPU is present: asking whether one is present could itself initialise the driver."""
    import torch

    checks = (lambda: torch.backends.cuda.is_built(), lambda: torch.backends.mps.is_built(),
              lambda: torch.xpu._is_compiled())
    for check in checks:
        try:
            if check():
                return True
        except Exception:  # noqa: BLE001 - an older torch without that backend's module
            pass
    return False


def check_no_gpu_initialised():
    """Raise when CUDA was initialised in this process: the children forked from it could not use it."""
    import torch

    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA was initialised in the worker host before it forks its children, which "
                           "then fail on every CUDA task (CUDA error: initialization error); nothing "
                           "the host runs before fork() may touch the GPU")
