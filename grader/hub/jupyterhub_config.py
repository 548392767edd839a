# The course's JupyterHub, written by `python -m grader hub init` and started by
# `python -m grader hub start` (docs/hub.md). What this hub is (its users and groups, its
# address and certificate, its time and memory limits, its idle timeout, its folders) is in
# hub.json beside this file, which `init` writes anew each time it runs: run init again to
# change those, or override a setting below this file's last line. Its secrets are in state/,
# which root alone may enter.
#
# Parts, all JupyterHub's and nbgrader's own:
# - the proxy: configurable-http-proxy (hub.json "proxy"), HTTPS when hub.json has a certificate;
# - logins: PAM with the machine's unix accounts (term), or one access code for the whole room
#   (workshop: JupyterHub's SharedPasswordAuthenticator; the host, the hub's admin, has a password
#   of their own);
# - servers: LocalProcessSpawner, each user's JupyterLab running as their own unix user;
# - jupyterhub-idle-culler, a service of the hub, stops servers nobody has used for a while;
# - nbgrader's exchange (hub.json "exchange") for release, fetch, submit, collect and feedback.
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "hub.json"), encoding="utf-8") as f:
    hub = json.load(f)
state = os.path.join(here, "state")


def secret(name):
    with open(os.path.join(state, name), encoding="utf-8") as f:
        return f.read().strip()


c = get_config()  # noqa: F821 - JupyterHub provides it when it loads this file

scheme = "https" if hub.get("ssl_cert") else "http"
c.JupyterHub.bind_url = f"{scheme}://{hub['ip']}:{hub['port']}"
if hub.get("ssl_cert"):
    c.JupyterHub.ssl_cert = hub["ssl_cert"]
    c.JupyterHub.ssl_key = hub["ssl_key"]
c.JupyterHub.db_url = "sqlite:///" + os.path.join(state, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(state, "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.command = hub["proxy"]
c.ConfigurableHTTPProxy.pid_file = os.path.join(state, "jupyterhub-proxy.pid")
c.ConfigurableHTTPProxy.auth_token = secret("proxy_token")
# A jupyterhub that stops leaves the users' servers running: `hub start` starts it again, and it
# finds them in its database (nobody logs in again, no kernel is lost). When `hub start` itself
# stops (Ctrl-C, SIGTERM, SIGHUP), it stops the servers and their kernels after jupyterhub.
c.JupyterHub.cleanup_servers = False
c.JupyterHub.cleanup_proxy = True

# Who may log in. Instructors (a workshop's host) are the hub's admins; the groups are nbgrader's
# (its docs name them formgrade-<course> and nbgrader-<course>), and decide each server's
# configuration below.
c.Authenticator.allowed_users = set(hub["users"])
c.Authenticator.admin_users = set(hub["groups"][hub["instructor_group"]])
c.JupyterHub.load_groups = {name: {"users": members} for name, members in hub["groups"].items()}
if hub["profile"] == "workshop":
    # Anyone with the room's code may log in as any participant (never as the host).
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = secret("access_code")
    c.SharedPasswordAuthenticator.admin_password = secret("admin_password")
else:
    c.JupyterHub.authenticator_class = "pam"

# Each user's JupyterLab, as their own unix user, in their home.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = hub["singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# A server reads the hub's configuration for its role (below), never the user's own ~/.jupyter:
# a user could otherwise let pages on the hub's address show their server in a frame.
c.Spawner.disable_user_config = True
# A server imports torch and JupyterLab before it answers: slow on a small machine.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
# LocalProcessSpawner does not enforce these: it only tells the server (MEM_LIMIT, CPU_LIMIT).
# The memory cap that holds is the one every kernel starts with (hub.json "memory_mb").
if hub.get("mem_limit"):
    c.Spawner.mem_limit = hub["mem_limit"]
if hub.get("cpu_limit"):
    c.Spawner.cpu_limit = hub["cpu_limit"]


def role_of(spawner):
    """'instructor' or 'student': the group the user is in."""
    return "instructor" if spawner.user.name in hub["groups"][hub["instructor_group"]] else "student"


def jupyter_config_path(spawner):
    """The folder of Jupyter and nbgrader configuration that this user's server reads."""
    return hub["config_path"][role_of(spawner)]


c.Spawner.environment = dict(hub["environment"], JUPYTER_CONFIG_PATH=jupyter_config_path)

# Idle servers stopped: jupyterhub-idle-culler asks the hub every so often for each server's last
# activity, and stops those idle for longer than the timeout. A kernel running a cell counts as
# activity (gptcourse.busy_kernels, a server extension every server loads), so a training run
# that prints nothing is never stopped; each server reports its activity often enough for that.
idle_timeout = hub.get("idle_timeout") or 0
if idle_timeout:
    c.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] = str(max(5, min(300, idle_timeout // 6)))
    c.JupyterHub.services = [{
        "name": "idle-culler",
        "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={idle_timeout}",
                    f"--cull-every={max(5, min(600, idle_timeout // 6))}"],
    }]
    c.JupyterHub.load_roles = [{
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }]
