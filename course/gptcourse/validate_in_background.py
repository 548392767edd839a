"""A Jupyter Server extension: nbgrader's Validate button, without freezing the student's server.

nbgrader's own handler (`nbgrader.server_extensions.validate_assignment`) runs the whole
notebook inside the request, on the server's only event loop: for the minute Validate takes,
the server answers nothing else. The student's other tabs and kernels wait, and so does the hub,
which after a restart asks every server whether it is there (a server that does not answer in
time is stopped). This extension serves the same two addresses the Assignments panel calls,
`/assignments/validate` and `/nbgrader_version`, with the same answers, and runs the validation
in a process of its own (`python -m gptcourse.validate_in_background PATH`, in the server's
folder and environment, so with the same nbgrader configuration), awaiting it without blocking.

The course hub turns it on and nbgrader's own validate extension off, for every server
(`c.ServerApp.jpserver_extensions`, grader/hub/commands.py).
"""
import asyncio
import json
import os
import sys
import traceback
from pathlib import Path


def validate(path, attempts=2):
    """What nbgrader's handler answers for the notebook at `path`: {"success": True, "value":
    the Validator's result}, or {"success": False, "value": why}. Run in the validating process.

    A validation that raised is tried once more before the student is told: in a room where
    everyone presses Validate at once, one of them failed inside nbgrader's Validator (its
    kernel, most likely, on a machine with every core busy), and a second try costs that one
    student seconds where a failure costs them a press and a wait. The first failure goes to
    the server's log (this process's standard error)."""
    from nbgrader.nbgraderformat import SchemaTooNewError, SchemaTooOldError

    for attempt in range(1, attempts + 1):
        try:
            return {"success": True, "value": _validator().validate(path)}
        except SchemaTooOldError:
            return {"success": False, "value": (f"The notebook '{path}' uses an old version of the nbgrader metadata "
                                                f"format. Please **back up this notebook** and then update the "
                                                f"metadata using:\n\nnbgrader update {path}\n")}
        except SchemaTooNewError:
            return {"success": False, "value": (f"The notebook '{path}' uses a newer version of the nbgrader metadata "
                                                f"format. Please update your version of nbgrader to the latest "
                                                f"version to be able to use this notebook.")}
        except Exception:  # noqa: BLE001 - the student reads it in the panel, as nbgrader's handler shows it
            failure = traceback.format_exc()
            if attempt < attempts:
                print(f"Validate of {path} failed (try {attempt} of {attempts}), trying again:\n{failure[-800:]}",
                      file=sys.stderr)
    return {"success": False, "value": failure}


def _validator():
    """nbgrader's Validator with the configuration nbgrader's handler would read."""
    from jupyter_core.paths import jupyter_config_path
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    app = NbGrader()
    app.config_file_paths.append([os.getcwd()] + jupyter_config_path())
    app.load_config_file()
    return Validator(config=app.config)


async def validate_in_a_process(path, cwd=None):
    """validate(path) in a child process, awaited without blocking the event loop."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gptcourse.validate_in_background", path, cwd=cwd,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    try:
        return json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = (err.decode(errors="replace") or out.decode(errors="replace")).strip()[-2000:]
        return {"success": False, "value": f"Validate stopped (exit {process.returncode}): {said}"}


def _jupyter_server_extension_points():
    return [{"module": "gptcourse.validate_in_background"}]


def _load_jupyter_server_extension(serverapp):
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_path_join
    from nbgrader.server_extensions.validate_assignment.handlers import NbGraderVersionHandler
    from tornado import web

    root = Path(serverapp.root_dir).expanduser().resolve()

    class ValidateHandler(JupyterHandler):
        @web.authenticated
        async def post(self):
            try:
                path = self.get_argument("path")
            except web.MissingArgumentError:
                path = self.get_json_body()["path"]
            target = (root / path).resolve()
            if not target.is_relative_to(root):
                raise web.HTTPError(403, "Access denied: path outside allowed directory")
            answer = await validate_in_a_process(str(target), cwd=os.getcwd())
            if not answer["success"]:  # in the server's log too, where a host looks for what went wrong
                serverapp.log.warning("Validate of %s failed: %s", path, str(answer["value"]).strip()[-800:])
            self.finish(json.dumps(answer))

    serverapp.web_app.settings.setdefault("root_dir", serverapp.root_dir)  # as nbgrader's own extension sets it
    base_url = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(".*$", [
        (url_path_join(base_url, "/assignments/validate"), ValidateHandler),
        (url_path_join(base_url, "/nbgrader_version"), NbGraderVersionHandler),
    ])
    serverapp.log.info("gptcourse.validate_in_background: Validate runs in a process of its own")


def skip_slow_optional_imports():
    """Keep jsonschema from importing rfc3987_syntax, which builds a parser for IRIs when it is
    imported: 0.7 of the 1.8 CPU-seconds this process spends importing nbgrader, paid by every
    Validate of a storm. jsonschema treats it as optional (it then checks no "iri" format, a
    format no notebook schema uses)."""
    sys.modules.setdefault("rfc3987_syntax", None)


if __name__ == "__main__":
    skip_slow_optional_imports()
    print(json.dumps(validate(sys.argv[1])))
