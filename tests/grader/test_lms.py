"""Scores into the LMS over LTI 1.3 (grader/outputs/lms.py: push-lms, lms-keys).

Against an LTI 1.3 platform that someone else wrote: lti1p3platform (PyPI) serving a course
over HTTP on a free port (tests/lms_platform.py says which parts are the library's and which
are ours: the storage and the HTTP glue). The tool's key is made and printed by `lms-keys`,
and pasted into the platform's registration as an administrator would.
"""
import json
import os
import stat
import time

import jwt
import pytest
import requests

from grader.outputs import exports
from grader.__main__ import main
from grader.outputs import lms
from lms_platform import CLIENT_ID, INSTRUCTOR, LmsPlatform, member

POINTS = {"2.1": 2, "2.2": 2, "2.3": 2, "2.4": 3, "2.5": 4, "3.1": 3, "3.2": 4}
CHAPTER_OF = {"2": "02_attention", "3": "03_multihead_attention"}


def record(submission, task, points=None):
    """A task record as grades.json holds it (full points unless told otherwise)."""
    maximum = POINTS[task]
    points = maximum if points is None else points
    return {"submission": submission, "notebook": "nb.ipynb", "notebook_sha": "0" * 64,
            "chapter": CHAPTER_OF[task[0]], "task": task, "names": ["x"], "level": "B", "max_points": maximum,
            "seed": 1, "device": "cpu", "notes": [], "status": "passed" if points == maximum else "failed",
            "points": points, "feedback": "", "duration_s": 0.5}


def class_records():
    """alice (by email) and bob (by SIS id): chapters 02 and 03; dave (by email): chapter 02
    only, so no score of 03 is sent for him; carol: not in the LMS course."""
    return ([record("alice@uni.edu", t) for t in POINTS]
            + [record("bob", t, 0 if t in ("2.4", "3.2") else None) for t in POINTS]
            + [record("dave@uni.edu", t, 1 if t == "2.5" else None) for t in POINTS if t.startswith("2.")]
            + [record("carol", t) for t in POINTS if t.startswith("2.")])


MEMBERS = [member("u-alice", email="Alice@Uni.edu"), member("u-bob", sourcedid="bob"),
           member("u-dave", email="dave@uni.edu"), member("u-teacher", email="carol", roles=[INSTRUCTOR])]
LMS_USER = {"alice@uni.edu": "u-alice", "bob": "u-bob", "dave@uni.edu": "u-dave"}


def totals(records, chapter):
    """{LMS user: the student's points in the chapter}, added up here from the records."""
    found = {}
    for r in records:
        if r["chapter"] == chapter and r["submission"] in LMS_USER:
            found[LMS_USER[r["submission"]]] = found.get(LMS_USER[r["submission"]], 0) + r["points"]
    return found


def run(capsys, *argv):
    """(exit status, stdout, stderr) of python -m grader ARGV, run in this process."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def make_key(capsys, path):
    """lms-keys: the key file made, and the key set it prints for the LMS."""
    status, out, _ = run(capsys, "lms-keys", "--key", str(path), "--format", "jwks")
    assert status == 0
    return json.loads(out)


@pytest.fixture
def graded(tmp_path):
    records = class_records()
    (tmp_path / "grades.json").write_text(json.dumps(records), encoding="utf-8")
    return tmp_path


@pytest.fixture
def platform():
    with LmsPlatform(MEMBERS) as served:
        yield served


@pytest.fixture
def setup(capsys, tmp_path, graded, platform):
    """The tool registered in the platform: its key made by lms-keys, PLATFORM.json written."""
    platform.register_tool(make_key(capsys, tmp_path / "keys" / "tool.pem"))
    config = tmp_path / "platform.json"
    config.write_text(json.dumps(platform.platform_json("keys/tool.pem")), encoding="utf-8")
    return graded, str(config)


def push(capsys, folder, config, *more):
    return run(capsys, "push-lms", str(folder), "--platform", config, *more)


# ------------------------------------------------------------------------------------------
# Against the platform
# ------------------------------------------------------------------------------------------

def test_the_token_comes_from_a_jwt_signed_with_the_tools_key(capsys, setup, platform, tmp_path):
    folder, config = setup
    status, _, err = push(capsys, folder, config)
    assert status == 1, err  # carol is not in the course (see the test of unknown students)
    request = platform.course.token_requests[0]
    assert request["grant_type"] == "client_credentials"
    assert request["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert set(request["scope"].split()) == {lms.SCOPE_LINEITEM, lms.SCOPE_SCORE, lms.SCOPE_MEMBERSHIPS}
    # The public key that lms-keys prints for Moodle checks the assertion, for the token URL.
    _, pem, _ = run(capsys, "lms-keys", "--key", str(tmp_path / "keys" / "tool.pem"), "--format", "pem")
    claims = jwt.decode(request["client_assertion"], pem, algorithms=["RS256"],
                        audience=f"{platform.base_url}/token")
    assert claims["iss"] == claims["sub"] == CLIENT_ID
    assert claims["jti"] and 0 < claims["exp"] - claims["iat"] <= 300
    registered = make_key(capsys, tmp_path / "keys" / "tool.pem")["keys"][0]
    assert jwt.get_unverified_header(request["client_assertion"])["kid"] == registered["kid"]


def test_one_line_item_per_chapter_with_each_students_chapter_total(capsys, setup, platform):
    folder, config = setup
    records = class_records()
    push(capsys, folder, config)
    items = {item["resourceId"]: item for item in platform.course.line_items.values()}
    assert sorted(items) == ["02_attention", "03_multihead_attention"]
    for chapter, item in items.items():
        assert item["label"] == exports.chapter_title(chapter)
        assert item["scoreMaximum"] == sum(p for t, p in POINTS.items() if CHAPTER_OF[t[0]] == chapter)
        assert item["tag"] == lms.TAG
        assert platform.course.results_of(chapter) == totals(records, chapter)
    # dave has no notebook of chapter 03: nothing is sent for him there (empty is not 0)
    assert "u-dave" in platform.course.results_of("02_attention")
    assert "u-dave" not in platform.course.results_of("03_multihead_attention")
    assert all(score["scoreMaximum"] == items[platform.course.line_items[n]["resourceId"]]["scoreMaximum"]
               and score["gradingProgress"] == "FullyGraded" for (n, _), score in platform.course.results.items())


def test_a_rerun_reuses_the_line_items_and_sends_the_same_scores(capsys, setup, platform):
    folder, config = setup
    push(capsys, folder, config)
    items_before = json.dumps(platform.course.line_items, sort_keys=True)
    results_before = {key: score["scoreGiven"] for key, score in platform.course.results.items()}
    status, out, _ = push(capsys, folder, config)
    assert status == 1  # carol, again
    assert json.dumps(platform.course.line_items, sort_keys=True) == items_before
    assert {key: score["scoreGiven"] for key, score in platform.course.results.items()} == results_before
    assert "created" not in out
    # Every score was sent again and accepted: this run's timestamp is later than the first's.
    assert len(platform.course.score_requests) == 2 * len(results_before)
    assert "kept" not in out


def test_a_run_stopped_half_way_is_completed_by_running_it_again(capsys, setup, platform):
    folder, config = setup
    platform.course.fail_scores_after = 2  # the LMS fails from the third score on
    status, _, err = push(capsys, folder, config)
    assert status == 2 and "failed on a score" in err
    assert len(platform.course.results) == 2
    platform.course.fail_scores_after = None
    status, _, _ = push(capsys, folder, config)
    assert status == 1  # carol
    assert len(platform.course.line_items) == 2
    records = class_records()
    for chapter in ("02_attention", "03_multihead_attention"):
        assert platform.course.results_of(chapter) == totals(records, chapter)


def test_a_wrong_key_is_refused_with_one_message_and_nothing_is_sent(capsys, setup, platform, tmp_path):
    folder, _ = setup
    make_key(capsys, tmp_path / "keys" / "other.pem")  # a second key, never registered in the LMS
    config = tmp_path / "wrong.json"
    config.write_text(json.dumps(platform.platform_json("keys/other.pem")), encoding="utf-8")
    status, out, err = push(capsys, folder, str(config))
    assert status == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the LMS refused the tool's key (HTTP 401")
    assert "lms-keys --key" in lines[0] and "other.pem" in lines[0] and "Nothing was sent" in lines[0]
    assert platform.course.token_requests  # it asked, and was refused
    assert platform.course.line_items == {} and platform.course.score_requests == []


def test_a_student_the_lms_does_not_know_is_named_and_skipped(capsys, setup, platform):
    folder, config = setup
    status, out, _ = push(capsys, folder, config)
    assert status == 1
    # carol's submission id is the email of an instructor of the course: no learner has it
    skipped = [line for line in out.splitlines() if line.strip().startswith("skipped")]
    assert len(skipped) == 1 and skipped[0].strip().startswith("skipped carol:")
    assert "u-teacher" not in {user for (_, user) in platform.course.results}
    assert {user for (_, user) in platform.course.results} == set(LMS_USER.values())


def test_dry_run_prints_every_score_and_sends_nothing(capsys, setup, platform):
    folder, config = setup
    status, out, _ = push(capsys, folder, config, "--dry-run")
    assert status == 1  # carol would be skipped
    assert platform.course.line_items == {} and platform.course.score_requests == []
    assert out.count("would create the line item") == 2
    sent = [json.loads(line.split("): ", 1)[1]) for line in out.splitlines() if "would send" in line]
    records = class_records()
    expected = [(chapter, user, points) for chapter in ("02_attention", "03_multihead_attention")
                for user, points in totals(records, chapter).items()]
    assert sorted((s["userId"], s["scoreGiven"]) for s in sent) == sorted((u, p) for _, u, p in expected)


def test_the_lms_keeps_a_grade_newer_than_the_run(capsys, setup, platform):
    """An instructor changed bob's grade in the LMS after the scores were sent: a later push
    does not overwrite it (the platform answers 409 to an older score) and says so."""
    folder, config = setup
    push(capsys, folder, config)
    number = next(n for n, item in platform.course.line_items.items() if item["resourceId"] == "02_attention")
    edited = dict(platform.course.results[(number, "u-bob")], scoreGiven=12, timestamp="2999-01-01T00:00:00.000+00:00")
    platform.course.results[(number, "u-bob")] = edited
    status, out, _ = push(capsys, folder, config, "--chapter", "02_attention")
    assert status == 1  # carol
    assert "kept bob's grade" in out
    assert platform.course.results[(number, "u-bob")]["scoreGiven"] == 12


def test_the_roster_gives_lms_ids_without_the_member_list(capsys, setup, platform, tmp_path):
    folder, _ = setup
    config = tmp_path / "no-members.json"
    config.write_text(json.dumps(platform.platform_json("keys/tool.pem", memberships=False)), encoding="utf-8")
    roster = tmp_path / "roster.csv"
    roster.write_text("submission,id\nalice@uni.edu,u-alice\nbob,u-bob\ndave@uni.edu,u-dave\ncarol,\n",
                      encoding="utf-8")
    status, out, _ = push(capsys, folder, str(config), "--roster", str(roster))
    assert status == 1 and "skipped carol: no LMS user id" in out
    assert lms.SCOPE_MEMBERSHIPS not in platform.course.token_requests[0]["scope"]
    assert platform.course.results_of("02_attention") == totals(class_records(), "02_attention")


def test_the_roster_email_finds_a_hub_username_in_the_member_list(capsys, setup, platform, tmp_path):
    folder, config = setup
    records = [dict(r, submission="alice7") for r in class_records() if r["submission"] == "alice@uni.edu"]
    (folder / "grades.json").write_text(json.dumps(records), encoding="utf-8")
    roster = tmp_path / "roster.csv"
    roster.write_text("submission,email\nalice7,ALICE@uni.edu\n", encoding="utf-8")
    status, _, err = push(capsys, folder, config, "--roster", str(roster))
    assert status == 0, err
    assert set(platform.course.results_of("02_attention")) == {"u-alice"}


def test_a_column_made_by_hand_with_the_chapters_heading_is_used(capsys, setup, platform):
    """Found by its label among the tool's line items, over several pages (the Link header)."""
    folder, config = setup
    for number, label in enumerate(["Quiz 1", "Quiz 2", exports.chapter_title("02_attention"), "Quiz 3"], 1):
        platform.course.line_items[str(number)] = {"id": f"{platform.base_url}/courses/7/lineitems/{number}/lineitem"
                                                         f"?type_id=3", "label": label, "scoreMaximum": 13}
    push(capsys, folder, config, "--chapter", "02_attention")
    assert len(platform.course.line_items) == 4  # nothing created
    assert {n for (n, _) in platform.course.results} == {"3"}


def test_a_chapter_whose_line_item_cannot_be_created_is_named(capsys, setup, platform):
    folder, config = setup
    platform.course.allow_creating = False
    status, out, _ = push(capsys, folder, config)
    assert status == 1
    assert out.count("not sent: the LMS did not create the line item") == 2
    assert platform.course.score_requests == []


# ------------------------------------------------------------------------------------------
# Pieces
# ------------------------------------------------------------------------------------------

def test_lms_keys_makes_a_private_key_once_and_prints_the_same_public_half(capsys, tmp_path):
    path = tmp_path / "tool.pem"
    first = make_key(capsys, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert make_key(capsys, path) == first
    assert first["keys"][0]["kid"] != make_key(capsys, tmp_path / "another.pem")["keys"][0]["kid"]
    public = first["keys"][0]
    assert public["kty"] == "RSA" and public["alg"] == "RS256" and "d" not in public


def test_moodle_s_refusal_of_a_key_is_read_as_one_too(tmp_path):
    """Moodle's token.php answers a wrong key with 400 and invalid_client (not 401)."""
    class Moodle:
        def request(self, method, url, **kwargs):
            response = requests.Response()
            response.status_code, response._content = 400, b'{"error": "invalid_client"}'
            return response

    key = lms.create_key(str(tmp_path / "k.pem"))
    platform = lms.Platform(client_id="17", token_url="https://moodle.test/mod/lti/token.php",
                            lineitems_url="https://moodle.test/lineitems", private_key=str(tmp_path / "k.pem"))
    with pytest.raises(lms.LmsError, match="refused the tool's key"):
        lms.request_token(Moodle(), platform, key, [lms.SCOPE_SCORE])


def test_scores_url_keeps_the_line_items_query():
    assert (lms.scores_url("https://m.test/mod/lti/services.php/2/lineitems/5/lineitem?type_id=1")
            == "https://m.test/mod/lti/services.php/2/lineitems/5/lineitem/scores?type_id=1")
    assert (lms.scores_url("https://c.test/api/lti/courses/1/line_items/9/")
            == "https://c.test/api/lti/courses/1/line_items/9/scores")


def test_the_next_page_in_moodle_s_typographic_quotes_is_followed():
    response = requests.Response()
    response.headers["Link"] = "<https://m.test/a?from=0>; rel=“first”, <https://m.test/a?from=10>; rel=“next”"
    assert lms.next_page(response) == "https://m.test/a?from=10"


def test_matching_never_guesses():
    learners = [member("17", email="ann@u.edu"), member("18", sourcedid="s-1"), member("19", email="s-1"),
                member("20", email="zoe@u.edu"), member("99")]
    matched, unmatched = lms.match_students(
        ["17", "ann@u.edu", "s-1", "zoe", "zed", "kim"],
        {"zoe": {"email": "zoe@u.edu"}, "zed": {"email": "ZOE@u.edu"}, "kim": {"id": "99"}}, learners)
    assert matched == {"ann@u.edu": lms.Match("17", "the course's member list"),
                       "kim": lms.Match("99", "the roster's id")}
    assert "no student" in unmatched["17"]  # a submission id is never read as the LMS's user id
    assert "several" in unmatched["s-1"]  # one member's SIS id, another's email
    assert "also matched by zed" in unmatched["zoe"] and "also matched by zoe" in unmatched["zed"]


# ------------------------------------------------------------------------------------------
# A sturdier push: odd answers, a platform under load, ids checked, https only
# ------------------------------------------------------------------------------------------

def test_a_member_list_without_members_is_one_message_and_exit_2(capsys, setup, platform):
    folder, config = setup
    platform.faults["/memberships"] = [(200, {"Content-Type": lms.MEMBERSHIPS_TYPE}, {"id": "x", "context": {}})]
    status, out, err = push(capsys, folder, config)
    assert status == 2, (out, err)
    assert "is not the list it should be" in err and "Traceback" not in err and "KeyError" not in err
    assert platform.course.results == {}  # nothing was sent


def test_429_and_503_are_tried_again_as_retry_after_asks(capsys, setup, platform, monkeypatch):
    folder, config = setup
    busy = (429, {"Retry-After": "1"}, {"error": "too many requests"})
    down = (503, {"Retry-After": "1"}, {"error": "unavailable"})
    platform.faults["/memberships"] = [busy, down]
    platform.faults["/scores"] = [down]
    started = time.monotonic()
    status, out, err = push(capsys, folder, config)
    assert status == 1, err  # carol, as always: every score of the others was sent
    assert {user for (_, user) in platform.course.results} == set(LMS_USER.values())
    assert time.monotonic() - started >= 3  # three waits of Retry-After's second
    memberships = [p for m, p in platform.requests_seen if p.endswith("/memberships")]
    assert len(memberships) == 3  # refused twice, then answered


def test_a_platform_that_stays_busy_is_not_asked_forever(capsys, setup, platform, monkeypatch):
    folder, config = setup
    monkeypatch.setattr(lms, "BACKOFF_S", 0.01)
    platform.faults["/memberships"] = [(503, {}, {"error": "unavailable"})] * 20
    status, _, err = push(capsys, folder, config)
    assert status == 2 and "refused to list" in err and "503" in err
    assert len([p for m, p in platform.requests_seen if p.endswith("/memberships")]) == lms.RETRIES + 1


def test_a_roster_id_the_member_list_lacks_is_not_sent(capsys, setup, platform, tmp_path):
    folder, config = setup
    roster = tmp_path / "roster.csv"
    roster.write_text("submission,id\nalice@uni.edu,u-nobody\n", encoding="utf-8")
    status, out, _ = push(capsys, folder, config, "--roster", str(roster))
    assert status == 1
    assert "skipped alice@uni.edu: the roster's id 'u-nobody' is not a student of the LMS course" in out
    assert "u-nobody" not in {user for (_, user) in platform.course.results}


def test_a_platform_address_must_be_https_but_on_the_loopback(tmp_path):
    key = tmp_path / "tool.pem"
    key.write_text("unused", encoding="utf-8")
    fields = {"client_id": "c", "token_url": "https://lms.example.org/token", "lineitems_url":
              "https://lms.example.org/lineitems", "private_key": "tool.pem"}
    path = tmp_path / "platform.json"
    path.write_text(json.dumps(fields), encoding="utf-8")
    assert lms.read_platform(path).token_url.startswith("https://")
    for name, url in (("token_url", "http://lms.example.org/token"), ("memberships_url", "http://10.0.0.5/m"),
                      ("lineitems_url", "ftp://lms.example.org/l")):
        path.write_text(json.dumps(dict(fields, **{name: url})), encoding="utf-8")
        with pytest.raises(lms.LmsError, match=f"{name} must be an https address"):
            lms.read_platform(path)
    for url in ("http://127.0.0.1:8000/token", "http://localhost/token", "http://[::1]:9/token"):
        path.write_text(json.dumps(dict(fields, token_url=url)), encoding="utf-8")
        assert lms.read_platform(path).token_url == url


def test_an_extension_granted_after_the_penalty_sends_the_recomputed_score_with_a_newer_timestamp(
        capsys, setup, platform, tmp_path):
    """bob handed chapter 02 in a day late and lost 10 % of it; then he was granted an extension:
    apply-policy recomputes, and push-lms sends his whole score again, later than the first."""
    folder, config = setup
    (folder / "run.json").write_text(json.dumps({"seed": 1, "device": "cpu"}))
    (folder / "times.json").write_text(json.dumps(
        {"bob": {"02_attention": {"timestamp": "2026-10-06T09:00:00+00:00", "file_time": None}}}))
    policy = tmp_path / "policy.toml"
    policy.write_text('timezone = "UTC"\n[penalty]\nper_day = 0.1\n[extensions]\nfile = "extensions.csv"\n'
                      '[chapters.02_attention]\ndue = 2026-10-05T23:59:00\n')
    (tmp_path / "extensions.csv").write_text("student,chapter,due\n")
    assert run(capsys, "apply-policy", str(folder), "--policy", str(policy))[0] == 0
    push(capsys, folder, config, "--chapter", "02_attention")
    number = next(n for n, item in platform.course.line_items.items() if item["resourceId"] == "02_attention")
    first = platform.course.results[(number, "u-bob")]
    raw = totals(class_records(), "02_attention")["u-bob"]
    assert first["scoreGiven"] == round(raw * 0.9, 2)
    time.sleep(0.01)  # the next run's timestamp is later by the clock, not only by rounding
    (tmp_path / "extensions.csv").write_text("student,chapter,due\nbob,02,2026-10-07 12:00\n")
    assert run(capsys, "apply-policy", str(folder), "--policy", str(policy))[0] == 0
    status, out, _ = push(capsys, folder, config, "--chapter", "02_attention")
    second = platform.course.results[(number, "u-bob")]
    assert second["scoreGiven"] == raw
    assert second["timestamp"] > first["timestamp"]
    assert "kept" not in out
