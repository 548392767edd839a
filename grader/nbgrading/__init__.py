"""Grading through nbgrader: the course as an nbgrader course directory (course), the configuration
instructors copy into theirs (nbgrader_config.py, read by nbgrader itself), the hidden tests'
side inside nbgrader's kernel (bridge) and the course's execute step for autograde (execute), and
the course's late policy in autograde (late), and the grader's points recorded in nbgrader's
gradebook (push)."""
