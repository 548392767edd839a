"""How a grading run starts, in one place, for `grade`, `regrade` and every other caller of
engine.grade: the settings, one preflight, one choice of what runs the jobs.

    settings = Settings(out_dir=..., device="auto", ...)     # or settings_from(args)
    runners = start(settings)           # the preflight; this machine's pool starts now
    engine.grade(paths, settings, runners)

On this machine the worker hosts start at once: they import torch while this process imports the
engine. On a Dask cluster (settings.cluster) the workers are reached once the graded chapters are
known (each checks there what it lacks: grader/cluster/worker.py) and the workers, not this
machine, decide whether CUDA cases run: the grading process may have no GPU at all.
This module imports no torch.
"""
from dataclasses import dataclass

from grader.grading import preflight


@dataclass
class Settings:
    out_dir: str
    device: str = "auto"  # auto | cpu | cuda
    jobs: int = 2
    timeout: float = 60.0  # seconds per task
    memory_mb: int = 2048  # per worker, on top of what torch itself uses
    sandbox: str = "auto"  # auto | bwrap | none (grader/grading/sandbox.py)
    seed: int = None
    progress: bool = True
    cluster: str = None  # the address of a Dask scheduler whose workers run the jobs (grader/cluster/pool.py)
    # The late policy to apply (grader/outputs/late.py's Setting), from --policy; None: the one the
    # folder applied before (its policy.json), if any.
    late: object = None


def settings_from(args):
    """The settings of `python -m grader grade`'s options. Raises policy.PolicyError for a
    policy file (or its extensions or times) that cannot be used."""
    from grader.outputs import late

    return Settings(out_dir=args.out, device=args.device, jobs=args.jobs, timeout=args.timeout,
                    memory_mb=args.memory_mb, seed=args.seed, progress=not args.quiet, sandbox=args.sandbox,
                    cluster=args.cluster, late=late.setting_from(args))


def start(settings):
    """The run's one preflight (raises preflight.PreflightError, having started nothing), then
    the JobRunners that will run its jobs."""
    local = settings.cluster is None
    # On a cluster, bubblewrap and CUDA are the workers' to have: each worker checks them itself.
    preflight.raise_if(preflight.machine_problems(settings.out_dir, settings.device if local else None,
                                                  settings.sandbox if local else None))
    return JobRunners(settings)


class JobRunners:
    """What runs a run's jobs: this machine's worker pool (started at once) or a Dask cluster's
    workers (reached by `for_chapters`, once the graded chapters are known)."""

    def __init__(self, settings):
        self.settings = settings
        self.pool = None
        if settings.cluster is None:
            from grader.grading import pool, sandbox

            self.pool = pool.WorkerPool(sandbox.choose(settings.sandbox), settings.jobs)

    def for_chapters(self, chapters):
        """The pool, with the cluster's workers checked for `chapters` on a cluster."""
        if self.pool is None:
            from grader.cluster.pool import ClusterPool

            self.pool = ClusterPool(self.settings.cluster, self.settings.sandbox, chapters, self.settings.device)
        return self.pool

    def devices(self):
        """The device matrix of the run: always the CPU; CUDA as --device asks, where the jobs run."""
        if self.settings.cluster is None:
            return devices_for(self.settings.device)
        if self.pool is None:
            raise RuntimeError("a cluster's devices are known once for_chapters has reached its workers")
        return self.pool.devices

    def close(self):
        if self.pool is not None:
            self.pool.close()


def devices_for(option):
    """The device matrix on this machine: always the CPU; CUDA too when asked for or (auto)
    present. The expected observations are the CPU's in any case."""
    import torch

    if option == "cpu":
        return ["cpu"]
    if option == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: no CUDA GPU is available on this machine")
        return ["cpu", "cuda"]
    if option == "auto":
        return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    raise SystemExit(f"--device must be auto, cpu or cuda, not {option!r}")
