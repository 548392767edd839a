"""A Dask cluster on Slurm for `grade --cluster`, through dask-jobqueue.

    python -m grader.cluster.slurm --workers 20 [--memory 6GB] [--walltime 02:00:00]
           [--checkout PATH] [--data-mirror PATH] [--queue NAME] [--account NAME]

run on the cluster's login node (or any machine whose address the compute nodes reach): it
starts a Dask scheduler there, submits one Slurm job per worker, prints the scheduler's address,
and keeps the cluster up until Ctrl-C (which cancels the jobs). In another shell:

    python -m grader grade submissions/ --out grades --cluster tcp://LOGIN-NODE:PORT

Each job runs one Dask worker process with one thread (one grading job at a time, in a worker
host of its own) from the same checkout and virtual environment as the grading process: a shared
file system holds them (`make setup` once, in `--checkout`). The grader checks every worker before
using it (grader/cluster/pool.py): a node without the data mirror, bubblewrap (with --sandbox bwrap) or
with another copy of the course is named and left out. `slurm_cluster(...)` is the same from
Python; `job_script()` of what it returns shows the script Slurm gets (tests/grader/test_cluster_setup.py
checks it without a Slurm).
"""
import argparse
import os
import sys
import time

from grader.paths import ROOT


def slurm_cluster(workers=0, memory="6GB", walltime="02:00:00", checkout=ROOT, data_mirror=None, queue=None,
                  account=None, host=None):
    """A dask_jobqueue.SLURMCluster whose jobs each run one single-threaded worker from `checkout`
    (its .venv and its course package), with GPTCOURSE_DATA_MIRROR set; scaled to `workers` jobs.

    memory: per job, for the worker, its worker host (torch, about 0.5 GB) and the task's own
    limit (--memory-mb, 2 GB by default) with room to spare."""
    from dask_jobqueue import SLURMCluster

    data_mirror = data_mirror or os.environ.get("GPTCOURSE_DATA_MIRROR")
    prologue = [f"cd {checkout}", "source .venv/bin/activate"]
    if data_mirror:
        prologue.append(f"export GPTCOURSE_DATA_MIRROR={data_mirror}")
    cluster = SLURMCluster(
        cores=1, processes=1,  # one worker process, one thread: one grading job at a time
        memory=memory, walltime=walltime, queue=queue, account=account,
        python=os.path.join(checkout, ".venv", "bin", "python"),
        job_script_prologue=prologue,
        scheduler_options={"dashboard_address": ":0", **({"host": host} if host else {})},
    )
    if workers:
        cluster.scale(jobs=workers)
    return cluster


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m grader.cluster.slurm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, required=True, help="Slurm jobs, one worker each")
    parser.add_argument("--memory", default="6GB", help="memory per job (default 6GB)")
    parser.add_argument("--walltime", default="02:00:00", help="time limit per job (default 02:00:00)")
    parser.add_argument("--checkout", default=ROOT, help="the course checkout on the shared file system")
    parser.add_argument("--data-mirror", default=None, help="the data mirror on the shared file system "
                                                             "(default: $GPTCOURSE_DATA_MIRROR)")
    parser.add_argument("--queue", default=None, help="Slurm partition")
    parser.add_argument("--account", default=None, help="Slurm account")
    args = parser.parse_args(argv)
    cluster = slurm_cluster(args.workers, args.memory, args.walltime, args.checkout, args.data_mirror,
                            args.queue, args.account)
    print(cluster.scheduler_address, flush=True)
    print(f"{args.workers} Slurm jobs submitted; grade with: python -m grader grade PATH --out DIR --cluster "
          f"{cluster.scheduler_address}   (Ctrl-C cancels the jobs)", file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(5)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
