"""The memory cap of a job's child, and of the kernels nbgrader starts (gptcourse/checking/kernel_memory.py)."""
import resource


def limit_memory(limit_mb):
    """Cap the data segment (heap and anonymous mappings) to what is in use now plus the limit."""
    in_use = _vm_data_bytes()
    soft = in_use + limit_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _vm_data_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0
