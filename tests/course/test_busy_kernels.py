"""gptcourse.busy_kernels: a kernel running a cell counts as its server's activity, so the hub's
idle culler never stops a silent training run (the whole behaviour, on a running hub, is
tests/hub/test_hub_init.py's workshop room)."""
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from gptcourse import busy_kernels


class Kernels:
    """What the extension asks of Jupyter Server's kernel manager: the ids, and each kernel."""

    def __init__(self, *states):
        self.kernels = {f"k{i}": SimpleNamespace(execution_state=state) for i, state in enumerate(states)}

    def list_kernel_ids(self):
        return list(self.kernels)

    def get_kernel(self, kernel_id):
        return self.kernels[kernel_id]


def server(*states):
    return SimpleNamespace(kernel_manager=Kernels(*states), web_app=SimpleNamespace(settings={}))


def test_a_busy_kernel_makes_now_the_servers_last_activity():
    app = server("idle", "busy")
    before = datetime.now(timezone.utc)
    busy_kernels.mark_busy_kernels_as_activity(app)
    marked = app.web_app.settings[busy_kernels.SETTING]
    assert before <= marked <= datetime.now(timezone.utc) and marked.tzinfo is not None
    # Jupyter Server counts every setting whose name ends so in its last activity.
    assert busy_kernels.SETTING.endswith("_last_activity")


@pytest.mark.parametrize("states", [(), ("idle",), ("idle", "starting"), ("dead",)])
def test_kernels_that_run_no_cell_are_no_activity(states):
    app = server(*states)
    busy_kernels.mark_busy_kernels_as_activity(app)
    assert busy_kernels.SETTING not in app.web_app.settings


@pytest.mark.parametrize("interval, every", [(None, 60), ("300", 60), ("60", 30), ("5", 2), ("1", 1), ("soon", 60)])
def test_it_looks_twice_as_often_as_the_server_reports_to_the_hub(monkeypatch, interval, every):
    if interval is None:
        monkeypatch.delenv("JUPYTERHUB_ACTIVITY_INTERVAL", raising=False)
    else:
        monkeypatch.setenv("JUPYTERHUB_ACTIVITY_INTERVAL", interval)
    assert busy_kernels.check_every_seconds() == every


def test_it_is_a_server_extension():
    assert busy_kernels._jupyter_server_extension_points() == [{"module": "gptcourse.busy_kernels"}]
