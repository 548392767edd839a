"""The course's JupyterLab has no pop-up about Jupyter's news (gptcourse.lab_settings): written
by `make setup` (and so before `make lab`) and by the course hub, from one definition.
tests/notebooks/test_jupyterlab.py checks the page itself."""
import json
import subprocess

from jupyterlab_server.settings_utils import _get_overrides

from factory import REPO
from gptcourse import lab_settings

PLUGIN = "@jupyterlab/apputils-extension:notification"


def test_jupyterlab_reads_the_setting_as_a_default_and_keeps_other_overrides(tmp_path):
    path = lab_settings.overrides_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
                                PLUGIN: {"doNotDisturbMode": True}}))

    assert lab_settings.turn_off_jupyter_news(tmp_path) == (path, True)
    overrides, error = _get_overrides(str(path.parent))  # how JupyterLab's server reads them

    assert error == ""
    assert overrides[PLUGIN] == {"doNotDisturbMode": True, "fetchNews": "false", "checkForUpdates": False}
    assert overrides["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}
    assert lab_settings.turn_off_jupyter_news(tmp_path) == (path, False)  # written once


def test_make_setup_and_make_lab_write_it_before_jupyterlab_starts(tmp_path):
    venv = tmp_path / "venv"  # never made: make only prints what it would run
    planned = subprocess.run(["make", "--dry-run", "--no-print-directory", "lab", f"VENV={venv}"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.splitlines()
    writes = planned.index(f"{venv}/bin/python -m gptcourse.lab_settings")
    starts = next(i for i, line in enumerate(planned) if line.startswith(f"{venv}/bin/jupyter lab"))
    assert writes < starts, planned
    setup = subprocess.run(["make", "--dry-run", "--no-print-directory", "setup", f"VENV={venv}"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout
    assert f"{venv}/bin/python -m gptcourse.lab_settings" in setup.splitlines()


def test_the_hub_turns_it_off_with_the_same_definition():
    from grader.hub import commands as hub

    assert hub.turn_off_jupyter_news is lab_settings.turn_off_jupyter_news
    assert "fetchNews" not in (REPO / "grader" / "hub" / "commands.py").read_text()  # no second copy of the setting
