"""Run a notebook's code cells top to bottom in one namespace, without Jupyter.

    python benchmarks/run_notebook.py solutions/05_pretraining.ipynb [--expect TEXT ...]

For machines that have the course's dependencies but no Jupyter packages (the lent GPU
machines): each code cell runs in order, as a kernel would run them, in the notebook's own
folder (the carry-over cells read the earlier chapters' notebooks beside it), with matplotlib
drawing into memory. It prints every cell's output under a line naming the cell and how long
it took, and at the end the total time. It stops at the first cell that raises, with its
traceback, and exits with status 1; also when an --expect text is missing from the output.
IPython's own syntax (%magics, !commands) is not supported: the course's notebooks have none.
"""
import argparse
import io
import json
import os
import sys
import time
import traceback


class Tee(io.TextIOBase):
    """Writes to the real stdout and keeps a copy, so the run can be checked afterwards."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


def code_cells(path):
    with open(path, encoding="utf-8") as file:
        cells = json.load(file)["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = cell["source"]
            yield cell.get("id", str(index)), "".join(source) if isinstance(source, list) else source


def run(path, expected=()):
    """Run the notebook at `path`; return 0 when every cell ran and every expected text was printed."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    path = os.path.abspath(path)
    os.chdir(os.path.dirname(path))
    namespace = {"__name__": "__main__"}
    tee = Tee(sys.stdout)
    sys.stdout = tee
    started = time.perf_counter()
    try:
        for cell_id, source in code_cells(path):
            print(f"\n----- cell {cell_id}", flush=True)
            began = time.perf_counter()
            try:
                exec(compile(source, f"<{os.path.basename(path)}, cell {cell_id}>", "exec"), namespace)
            except Exception:  # noqa: BLE001 - report any error of the notebook's code, then stop
                traceback.print_exc(file=sys.stdout)
                print(f"----- cell {cell_id} FAILED after {time.perf_counter() - began:.1f} s")
                return 1
            print(f"----- cell {cell_id}: {time.perf_counter() - began:.1f} s", flush=True)
            _close_figures()
    finally:
        sys.stdout = tee.stream
    missing = [text for text in expected if text not in tee.copy.getvalue()]
    print(f"\n{os.path.basename(path)}: every cell ran, {time.perf_counter() - started:.1f} s in all")
    for text in missing:
        print(f"expected in the output but missing: {text!r}")
    return 1 if missing else 0


def _close_figures():
    if "matplotlib.pyplot" in sys.modules:  # free the memory of the figures the cell drew
        sys.modules["matplotlib.pyplot"].close("all")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    parser.add_argument("--expect", nargs="*", default=[], help="texts the output must contain")
    args = parser.parse_args(argv)
    return run(args.notebook, args.expect)


if __name__ == "__main__":
    sys.exit(main())
