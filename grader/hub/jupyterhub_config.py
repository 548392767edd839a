# The course's JupyterHub, written by `python -m grader hub init` and started by
# `python -m grader hub start` (docs/hub.md). Everything specific to this hub (who is who, the
# ports, the paths) is in hub.json beside this file: change it there, or override below.
#
# Parts, all JupyterHub's and nbgrader's own:
# - the proxy: configurable-http-proxy (hub.json "proxy");
# - logins: PAM with the machine's unix accounts (term), or one access code for the whole room
#   (workshop: JupyterHub's SharedPasswordAuthenticator);
# - servers: LocalProcessSpawner, each user's JupyterLab running as their own unix user;
# - nbgrader's exchange (hub.json "exchange") for release, fetch, submit, collect and feedback.
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "hub.json"), encoding="utf-8") as f:
    hub = json.load(f)

c = get_config()  # noqa: F821 - JupyterHub provides it when it loads this file

c.JupyterHub.bind_url = f"http://{hub['ip']}:{hub['port']}"
c.JupyterHub.db_url = "sqlite:///" + os.path.join(here, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(here, "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.command = hub["proxy"]
c.ConfigurableHTTPProxy.pid_file = os.path.join(here, "jupyterhub-proxy.pid")
# Stop the users' servers and the proxy with the hub: `hub start` promises nothing left running.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# Who may log in. Instructors are the hub's admins; the groups are nbgrader's (its docs name them
# formgrade-<course> and nbgrader-<course>), and decide each server's configuration below.
c.Authenticator.allowed_users = set(hub["users"])
c.Authenticator.admin_users = set(hub["groups"][hub["instructor_group"]])
c.JupyterHub.load_groups = {name: {"users": members} for name, members in hub["groups"].items()}
if hub["profile"] == "workshop":
    c.JupyterHub.authenticator_class = "shared-password"
    with open(os.path.join(here, "access_code"), encoding="utf-8") as f:
        c.SharedPasswordAuthenticator.user_password = f.read().strip()
else:
    c.JupyterHub.authenticator_class = "pam"

# Each user's JupyterLab, as their own unix user, in their home.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = hub["singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# A server imports torch and JupyterLab before it answers: slow on a small machine.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
# LocalProcessSpawner does not enforce these: it only tells the server (MEM_LIMIT, CPU_LIMIT).
# The memory cap that holds is the one every kernel starts with (hub.json "kernel_memory_mb").
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
