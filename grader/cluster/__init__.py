"""Grading on a Dask cluster (`grade --cluster`): the grading process's side (pool), the Dask
worker's side (worker), and ways to start a cluster: on this machine (local) or on Slurm (slurm)."""
