"""`python -m gptcourse.checking.worker_host`: one worker host, until the grader closes its stdin.

grader/grading/sandbox.py starts it so (in the sandbox or not); everything it does is in host.py."""
import sys

from gptcourse.checking.worker_host.host import main

sys.exit(main())
