"""A tiny web server on 127.0.0.1 for the tests: it stands in for the internet (the course's
machines reach no host but the package registries) and counts what it is asked for."""
from __future__ import annotations

import http.server
import threading
from pathlib import Path


class LocalWebServer:
    """A tiny HTTP server on 127.0.0.1 serving one folder, counting the requests.

    It runs in a thread of the test process, so a notebook kernel (another process) can
    download from it while the test waits for the kernel."""

    def __init__(self, folder: Path):
        self.requested_paths: list[str] = []
        requested_paths = self.requested_paths

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(folder), **kwargs)

            def do_GET(self):
                requested_paths.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass  # keep the test output quiet

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll interval makes stop() quick (shutdown waits for the next poll).
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.running = True

    def url(self, filename: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/{filename}"

    def stop(self) -> None:
        if self.running:
            self.server.shutdown()
            self.server.server_close()
            self.thread.join()
            self.running = False
