"""A Dask cluster on this machine, to try `grade --cluster`, benchmark it, and test it.

    python -m grader.cluster.local --workers 2        # prints the scheduler's address; Ctrl-C stops it

It starts the same processes a cluster has on many machines: one `dask scheduler` and N
`dask worker` processes (one thread each, no nanny: each worker is one process), on free ports of
127.0.0.1, with this environment (the data mirror, the course package). `LocalCluster` below
does the same from Python and stops every process it started, by process id.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_command(*args):
    """`dask ...` with this interpreter's Dask (its `dask` script lies beside it)."""
    return [sys.executable, "-m", "distributed.cli.dask_worker" if args[0] == "worker" else
            "distributed.cli.dask_scheduler", *args[1:]]


class LocalCluster:
    """A scheduler and `workers` worker processes on 127.0.0.1; use as a context manager."""

    def __init__(self, workers=2, env=None, worker_env=None):
        self.env = dict(os.environ if env is None else env)
        self.worker_env = worker_env or {}  # per worker name: extra environment (tests)
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.folder = tempfile.mkdtemp(prefix="dask-")
        self.scheduler = None
        self.workers = {}  # name -> Popen
        self.count = workers

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        # A scheduler left behind by a process killed before stop() ends itself once idle, and its
        # workers 60 s after it (--death-timeout).
        self.scheduler = self._spawn(dask_command("scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                                  "--no-dashboard"),
                                     dict(self.env, DASK_DISTRIBUTED__SCHEDULER__IDLE_TIMEOUT="15 minutes"))
        for number in range(1, self.count + 1):
            self.start_worker(f"worker-{number}")
        self.wait_for_workers(self.count)
        return self

    def start_worker(self, name, env=None):
        worker_env = dict(self.env, **self.worker_env.get(name, {}), **(env or {}))
        self.workers[name] = self._spawn(dask_command(
            "worker", self.address, "--name", name, "--nthreads", "1", "--no-nanny", "--no-dashboard",
            "--local-directory", os.path.join(self.folder, name), "--death-timeout", "60"), worker_env)
        return self.workers[name]

    def wait_for_workers(self, count, timeout=120):
        """Wait until the scheduler has `count` workers."""
        from distributed import Client

        with Client(self.address, timeout=timeout, set_as_default=False) as client:
            client.wait_for_workers(count, timeout=timeout)

    def kill_worker(self, name, sig=signal.SIGKILL):
        os.killpg(self.workers[name].pid, sig)
        self.workers[name].wait(30)

    def kill_scheduler(self, sig=signal.SIGKILL):
        os.killpg(self.scheduler.pid, sig)
        self.scheduler.wait(30)

    def stop(self):
        """End every process this cluster started (and what they started), by process group."""
        for process in [*self.workers.values(), self.scheduler]:
            if process is None or process.poll() is not None:
                continue
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                pass

    @staticmethod
    def _spawn(command, env):
        # A session of its own: stop() ends the process and its worker hosts together.
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m grader.cluster.local", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    args = parser.parse_args(argv)
    with LocalCluster(args.workers) as cluster:
        print(cluster.address, flush=True)
        print(f"{args.workers} workers; grade with: python -m grader grade PATH --out DIR --cluster "
              f"{cluster.address}   (Ctrl-C stops the cluster)", file=sys.stderr, flush=True)
        try:
            while cluster.scheduler.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
