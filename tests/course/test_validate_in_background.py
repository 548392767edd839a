"""gptcourse.validate_in_background: nbgrader's Validate in a process of its own, the server
answering other requests meanwhile (nbgrader's own handler holds the server's event loop for the
whole validation). A real Jupyter Server with the extension, as the course hub configures it."""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import nbformat
import pytest

from gptcourse import validate_in_background
from lab_in_browser import free_port

pytestmark = pytest.mark.slow  # a Jupyter Server and a kernel (about 15 s)

SLOW_CELL = "import time\ntime.sleep(4)\nprint('done')"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("validate_root")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SLOW_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "slow.ipynb")
    (root / "broken.ipynb").write_text("not json")
    port, token = free_port(), "t0ken"
    extensions = {"gptcourse.validate_in_background": True, "nbgrader.server_extensions.validate_assignment": False}
    home = tmp_path_factory.mktemp("validate_home")
    (home / "config").mkdir()
    (home / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": extensions}}))  # as the hub writes it for a server
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--allow-root"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=open(home / "server.log", "w"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise AssertionError("the Jupyter Server did not start")
            time.sleep(0.3)
    try:
        yield url, token, home / "server.log"
    finally:
        process.terminate()
        process.wait(timeout=30)


def post_validate(url, token, path):
    request = urllib.request.Request(f"{url}/assignments/validate?token={token}",
                                     data=f"path={path}".encode(), method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


def test_the_server_answers_while_a_notebook_is_validated(server):
    url, token, _ = server
    result = {}
    validating = threading.Thread(target=lambda: result.update(post_validate(url, token, "slow.ipynb")))
    validating.start()
    time.sleep(1.5)  # the kernel starts, then the cell sleeps for 4 s
    waits = []
    while validating.is_alive() and len(waits) < 5:
        started = time.monotonic()
        urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=30).read()
        waits.append(time.monotonic() - started)
        time.sleep(0.3)
    validating.join(timeout=120)
    assert waits and max(waits) < 1.0, waits  # nbgrader's own handler: several seconds, the whole validation
    assert result["success"] is True and isinstance(result["value"], dict), result
    version = urllib.request.urlopen(f"{url}/nbgrader_version?version=0&token={token}", timeout=30).read()
    assert "success" in json.loads(version)


def test_a_path_outside_the_server_s_folder_is_refused(server):
    url, token, _ = server
    with pytest.raises(urllib.error.HTTPError) as refused:
        post_validate(url, token, "../../etc/passwd")
    assert refused.value.code == 403


def test_a_failed_validation_is_said_in_the_server_s_log_too(server):
    """What the student sees in the panel, the host finds in the server's log."""
    url, token, log = server
    said = post_validate(url, token, "broken.ipynb")
    assert said["success"] is False
    assert "Validate of broken.ipynb failed:" in log.read_text() and "NotJSONError" in log.read_text()


def test_a_notebook_that_cannot_be_read_is_said_in_the_answer(tmp_path):
    (tmp_path / "broken.ipynb").write_text("not json")
    said = validate_in_background.validate(str(tmp_path / "broken.ipynb"))
    assert said["success"] is False and "Traceback" in said["value"]


def test_the_validating_process_skips_the_slow_optional_import(tmp_path):
    """Every Validate of a storm starts this process: it must not pay for jsonschema's optional
    IRI parser (rfc3987_syntax builds a grammar when imported, 0.7 CPU-seconds here), and it must
    still validate."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(1 + 1)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "small.ipynb")
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "gptcourse.validate_in_background",
                          str(tmp_path / "small.ipynb")], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    imported = [line.rpartition("|")[2].strip() for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert "nbgrader.validator" in imported and "jsonschema" in imported, run.stderr[-2000:]
    assert "rfc3987_syntax.syntax_helpers" not in imported  # (the blocked import itself is listed, at 0 s)
    assert json.loads(run.stdout.strip().splitlines()[-1])["success"] is True, run.stdout


def test_a_validation_that_raises_once_is_tried_again(tmp_path, monkeypatch, capsys):
    """One Validate in a 25-person storm failed inside nbgrader's Validator and never again: a
    validation that raises is tried once more before the student is told, and said in the log."""
    from nbgrader.validator import Validator

    calls = []

    def fails_once(self, path):
        calls.append(path)
        if len(calls) == 1:
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return {}

    monkeypatch.setattr(Validator, "validate", fails_once)
    assert validate_in_background.validate(str(tmp_path / "nb.ipynb")) == {"success": True, "value": {}}
    assert len(calls) == 2 and "Kernel didn't respond" in capsys.readouterr().err
    calls.clear()
    monkeypatch.setattr(Validator, "validate", lambda self, path: calls.append(path) or 1 / 0)
    said = validate_in_background.validate(str(tmp_path / "nb.ipynb"))
    assert said["success"] is False and "ZeroDivisionError" in said["value"] and len(calls) == 2
