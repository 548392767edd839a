"""The course's JupyterLab: no pop-up about Jupyter's news over the notebooks.

JupyterLab 4 asks every new user "Would you like to get notified about official Jupyter
news?" in a notification that stays over the cells, their outputs and plots until it is
answered. The course answers it for the room with JupyterLab's own setting, `fetchNews` of the
plugin @jupyterlab/apputils-extension:notification, written as a default of the environment's
JupyterLab: its settings overrides, `<environment>/share/jupyter/lab/settings/overrides.json`,
which JupyterLab reads at start for every user of that environment. (A user who wants the news
can still turn them on in Settings.) It also keeps JupyterLab from asking the internet for
updates, which a workshop room without internet cannot reach anyway.

`make setup` (and so `make lab`) writes it with `python -m gptcourse.lab_settings`, and the
course hub's `hub init` calls `turn_off_jupyter_news()` for its servers' environment.

A student's JupyterLab shows nbgrader's Validate button and its assignment list, not the
instructor's pieces (creating assignments, the formgrader, the course list): the course hub
gives its students that configuration, and `make lab` does too, from a configuration folder of
its own (`python -m gptcourse.lab_settings --student-config FOLDER`, then JUPYTER_CONFIG_PATH).
"""
import json
import sys
from pathlib import Path

from .messages import say

NO_NEWS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}

# nbgrader's pieces students do not use: creating assignments, the formgrader, the course list.
INSTRUCTOR_ONLY_LAB_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                               "@jupyter/nbgrader:course-list"]
INSTRUCTOR_ONLY_SERVER_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]


def overrides_path(prefix=None):
    """The settings overrides of the JupyterLab installed in the environment at `prefix`
    (default: this interpreter's)."""
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def turn_off_jupyter_news(prefix=None):
    """Write NO_NEWS into the environment's JupyterLab overrides, keeping the other overrides
    found there. Returns the file's path and whether it changed."""
    path = overrides_path(prefix)
    overrides = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    wanted = {plugin: {**overrides.get(plugin, {}), **settings} for plugin, settings in NO_NEWS.items()}
    changed = any(overrides.get(plugin) != settings for plugin, settings in wanted.items())
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**overrides, **wanted}, indent=1) + "\n", encoding="utf-8")
    return path, changed


def write_student_config(folder):
    """A Jupyter configuration folder for a student's JupyterLab: the instructor's nbgrader
    plugins and server extensions off. Put it first on JUPYTER_CONFIG_PATH."""
    folder = Path(folder)
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    (folder / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in INSTRUCTOR_ONLY_LAB_PLUGINS}}, indent=1) + "\n",
        encoding="utf-8")
    (folder / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {name: False for name in INSTRUCTOR_ONLY_SERVER_EXTENSIONS}}},
                   indent=1) + "\n", encoding="utf-8")
    return folder


if __name__ == "__main__":
    if sys.argv[1:2] == ["--student-config"] and len(sys.argv) == 3:
        write_student_config(sys.argv[2])
    else:
        written, changed = turn_off_jupyter_news()
        if changed:
            say(f"JupyterLab's news pop-up turned off for this environment: {written}")
