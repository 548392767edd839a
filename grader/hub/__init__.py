"""The course on a JupyterHub (`python -m grader hub init|start`, docs/hub.md): the commands
(commands), the hub's unix accounts and running a command as one of them (accounts), the
instructor's course directory, made by the instructor's own process (course_directory), the hub's
configuration file (jupyterhub_config.py, read by jupyterhub itself) and the collect that checks
who handed a submission in (collect)."""
