"""A small class rehearsal (benchmarks/hub_rehearsal.py): four participants, one of them in
headless Chromium, log in to a workshop room, run their first check, then press Validate and
Submit while jupyterhub and then its proxy are killed (-9) and one kernel fills its memory.

Nothing may be lost: every login works, every fault is recovered from with no user's server lost,
every participant's submission is collected exactly once and graded in full by the course
grader. Root only (real accounts); about two minutes: marked slow.
"""
import os
import sys

import pytest

from factory import REPO

pytestmark = pytest.mark.slow

PARTICIPANTS = 4


@pytest.fixture(scope="module")
def rehearsal(machine):
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    try:
        import hub_rehearsal
    finally:
        sys.path.remove(os.path.join(REPO, "benchmarks"))
    return hub_rehearsal.rehearse(machine, participants=PARTICIPANTS, ramp=8, storm=12, faults=True, browsers=1,
                                  log=lambda line: print(line))


def test_every_participant_logs_in_and_checks(rehearsal):
    assert rehearsal["logins_ok"] == PARTICIPANTS, rehearsal["problems"]
    assert rehearsal["first_check_p95_s"] is not None
    assert rehearsal["pages_that_opened_the_notebook"] == 1  # the participant in Chromium


# Once, with nbgrader's own Validate handler, a server was lost at the proxy's fault. The likely
# cause (not reproduced since): the restarted jupyterhub asks every server it finds whether it is
# there, and stops one that does not answer in time; a server whose event loop nbgrader's handler
# held for a whole validation could not. The hub's servers now validate in a process of their own
# (gptcourse.validate_in_background, whose test shows the server answering during a validation), and
# no server has been lost since in any run of this test or of the 25- and 30-participant rehearsals.
def test_every_fault_is_recovered_from_with_no_server_lost(rehearsal):
    faults = {fault["fault"]: fault for fault in rehearsal["faults"]}
    assert set(faults) == {"SIGKILL jupyterhub", "SIGKILL configurable-http-proxy", "a kernel filling its memory"}
    for fault in faults.values():
        assert fault["recovered"] and fault["servers_lost"] == 0, fault


def test_nothing_is_lost_or_handed_in_twice(rehearsal):
    assert rehearsal["submitted"] == rehearsal["collected"] == PARTICIPANTS, rehearsal["problems"]
    assert rehearsal["lost"] == 0 and rehearsal["duplicated"] == 0
    assert rehearsal["graded_in_full"] == PARTICIPANTS


def test_the_figures_a_host_plans_with_are_there(rehearsal):
    assert isinstance(rehearsal["validate_failures"], int)  # each failure is in the problems, with its end
    for key in ("spawn_p50_s", "spawn_p95_s", "spawn_max_s", "validate_p95_s", "peak_rss_mb",
                "peak_rss_per_participant_mb"):
        assert rehearsal[key] is not None and rehearsal[key] > 0, key
    assert rehearsal["hub_metrics"]["after_the_logins"]["jupyterhub_server_spawn_duration_seconds"]["count"] == PARTICIPANTS
    assert rehearsal["machine"]["cores"] == os.cpu_count()
