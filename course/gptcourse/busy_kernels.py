"""A Jupyter Server extension: a kernel that is running a cell counts as activity.

A course hub stops the servers nobody has used for an hour (jupyterhub-idle-culler, see
docs/hub.md). It judges by the "last activity" each server reports to the hub, and Jupyter
Server counts as activity only requests and messages: a training cell that prints nothing for an
hour looks idle, and its server would be stopped with the training half done. This extension
looks at the kernels every so often and, while any of them is busy, marks the server active
now (Jupyter Server adds every setting whose name ends in `_last_activity` to its last
activity, and the hub's single-user server reports it).

The course hub turns it on for every server (`c.ServerApp.jpserver_extensions`).
"""
import os
from datetime import datetime, timezone

SETTING = "busy_kernels_last_activity"


def check_every_seconds():
    """Twice as often as the server reports its activity to the hub (JupyterHub's
    JUPYTERHUB_ACTIVITY_INTERVAL, 300 s by default), and at least once a minute."""
    try:
        reported = int(os.environ.get("JUPYTERHUB_ACTIVITY_INTERVAL", "300"))
    except ValueError:
        reported = 300
    return max(1, min(60, reported // 2))


def any_kernel_busy(kernel_manager):
    for kernel_id in kernel_manager.list_kernel_ids():
        if getattr(kernel_manager.get_kernel(kernel_id), "execution_state", None) == "busy":
            return True
    return False


def _jupyter_server_extension_points():
    return [{"module": "gptcourse.busy_kernels"}]


def mark_busy_kernels_as_activity(serverapp):
    """Now is the server's last activity if one of its kernels is running a cell."""
    if any_kernel_busy(serverapp.kernel_manager):
        serverapp.web_app.settings[SETTING] = datetime.now(timezone.utc)


def _load_jupyter_server_extension(serverapp):
    from tornado.ioloop import PeriodicCallback

    PeriodicCallback(lambda: mark_busy_kernels_as_activity(serverapp), check_every_seconds() * 1000).start()
    serverapp.log.info("gptcourse.busy_kernels: a busy kernel counts as activity (checked every %s s)",
                       check_every_seconds())
