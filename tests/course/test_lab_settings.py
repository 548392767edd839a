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
    starts = next(i for i, line in enumerate(planned) if f"{venv}/bin/jupyter lab" in line)
    assert writes < starts, planned
    setup = subprocess.run(["make", "--dry-run", "--no-print-directory", "setup", f"VENV={venv}"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout
    assert f"{venv}/bin/python -m gptcourse.lab_settings" in setup.splitlines()


def test_the_hub_turns_it_off_with_the_same_definition():
    from grader.hub import commands as hub

    assert hub.turn_off_jupyter_news is lab_settings.turn_off_jupyter_news
    assert "fetchNews" not in (REPO / "grader" / "hub" / "commands.py").read_text()  # no second copy of the setting


def test_make_lab_starts_a_student_s_jupyterlab(tmp_path, monkeypatch):
    """Validate and the assignment list, not Create Assignment, the formgrader or the course list:
    what the course hub gives its students, read the way JupyterLab and Jupyter Server read it."""
    import os
    import sys

    from jupyterlab_server.config import get_page_config

    planned = subprocess.run(["make", "--dry-run", "--no-print-directory", "lab", f"VENV={tmp_path / 'venv'}"],
                             cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "-m gptcourse.lab_settings --student-config .lab-config" in planned
    assert f'JUPYTER_CONFIG_PATH="{REPO}/.lab-config' in planned

    folder = lab_settings.write_student_config(tmp_path / "lab-config")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(folder))
    disabled = get_page_config([], logger=None).get("disabledExtensions", [])
    off = {name for name, value in disabled.items() if value} if isinstance(disabled, dict) else set(disabled)
    assert off >= set(lab_settings.INSTRUCTOR_ONLY_LAB_PLUGINS), disabled
    assert "@jupyter/nbgrader:validate-assignment" not in off
    # Jupyter Server's own reading of the configuration (its file values win over the extensions'
    # enabling files when the server loads them).
    read = subprocess.run([sys.executable, "-c", "import json\nfrom jupyter_server.serverapp import ServerApp\n"
                           "app = ServerApp()\napp.load_config_file()\nprint(json.dumps(dict(app.jpserver_extensions)))"],
                          capture_output=True, text=True, check=True, env=dict(os.environ, JUPYTER_CONFIG_PATH=str(folder)))
    extensions = json.loads(read.stdout.strip().splitlines()[-1])
    assert all(extensions.get(name) is False for name in lab_settings.INSTRUCTOR_ONLY_SERVER_EXTENSIONS), extensions
    assert extensions.get("nbgrader.server_extensions.validate_assignment", True) is not False


def test_the_hub_hides_the_same_pieces_from_its_students():
    from grader.hub import commands as hub

    assert hub.INSTRUCTOR_ONLY_LAB_PLUGINS is lab_settings.INSTRUCTOR_ONLY_LAB_PLUGINS
    assert hub.INSTRUCTOR_ONLY_SERVER_EXTENSIONS is lab_settings.INSTRUCTOR_ONLY_SERVER_EXTENSIONS
