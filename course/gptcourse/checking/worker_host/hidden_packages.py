"""The grader's own packages, made unimportable to the code a host runs."""
import importlib.machinery
import os
import sys


class _HiddenPackageBlocker:
    """A meta-path finder that refuses the hidden packages (the grader's own)."""

    def __init__(self, names):
        self.names = tuple(names)

    def find_spec(self, name, path=None, target=None):
        if any(name == hidden or name.startswith(hidden + ".") for hidden in self.names):
            raise ImportError(f"the package {name.split('.')[0]!r} is not available to graded code")
        return None


def hide_packages(names):
    """Make the grader's packages unimportable here: drop the path entries and the (editable
    install) finders that lead to them, and refuse them by name.

    In the sandbox their files are not there at all; without it this only stops accidental
    imports (a copied instructor cell), since student code could undo it: see docs/grading.md.
    """
    names = [n for n in names if n]
    for name in [m for m in sys.modules if any(m == n or m.startswith(n + ".") for n in names)]:
        del sys.modules[name]
    for name in names:
        for finder in list(sys.meta_path):
            if finder is importlib.machinery.PathFinder:
                continue  # the ordinary path search: handled through sys.path below
            try:
                found = finder.find_spec(name, None) is not None
            except Exception:  # noqa: BLE001 - the blocker below refuses the name anyway
                found = False
            if found:
                sys.meta_path.remove(finder)
        sys.path[:] = [entry for entry in sys.path
                       if not os.path.isdir(os.path.join(entry or ".", name))]
    sys.meta_path.insert(0, _HiddenPackageBlocker(names))
