"""Scores into the LMS over LTI 1.3: Assignment and Grade Services (AGS).

    python -m grader lms-keys --key KEY.pem [--format all|pem|jwk|jwks]
    python -m grader push-lms DIR --platform PLATFORM.json [--chapter NAME ...] [--roster CSV] [--dry-run]

`lms-keys` makes the tool's RSA key pair (once; afterwards it reads the same file) and prints
its public half in the forms an LMS asks for: a PEM public key (Moodle), a JWK (Canvas) and a
key set (JWKS). The private key never leaves this machine.

`push-lms` sends each student's chapter score (the chapter's points added up, as the CSV
export's chapter column, grader/outputs/exports.py) to the LMS course:
1. an access token: an OAuth 2 client-credentials grant whose client is authenticated by a JWT
   signed with the tool's private key (IMS Security Framework 1.0, RFC 7523);
2. the students: each submission id is matched to one LMS user, through the roster CSV's `id`
   column (the LMS's own user id) or through the course's member list (LTI Names and Role
   Provisioning Services): a member whose email or SIS id (lis_person_sourcedid) equals the
   submission id, or the roster's email or sis_user_id of that submission. A submission with
   no such member, or with several, or one whose member another submission also matched, is
   named and skipped: a score never goes to a guessed person;
3. per chapter, the course's line item (a gradebook column) for it: the tool's line item whose
   resourceId is the chapter id (else whose label is the chapter's heading), created when
   there is none;
4. one score per student and chapter, POSTed to the line item's scores URL.

A run that stopped half-way is safe to repeat: the line items are found again (not created
twice) and a score sent again replaces the same score. Every score carries the time of this
run: AGS orders scores by that timestamp, and an LMS keeps a newer grade (an instructor's
edit there, say) instead of an older score (HTTP 409), which is reported, not overwritten.
A chapter a student did not submit is not sent at all (empty is not 0).

--dry-run reads from the LMS (the token, the member list, the line items) but changes nothing
there: it prints the line items it would create and every score it would send.

Exit status: 0 when every matched student's scores were sent; 1 when something was named and
skipped (a student not matched, a score or a line item the LMS refused); 2 when the run stopped
(a configuration error, the tool's key refused, the LMS unreachable or failing).

JOSE (keys, JWKs, the signed JWT) is jwcrypto's; HTTP is requests'. docs/grading.md says how
to register the tool in Moodle and Canvas.
"""
import argparse
import datetime
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit, urlunsplit

import ipaddress

import requests
from jwcrypto import jwk
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry
from jwcrypto import jwt as jose_jwt

from grader.outputs import exports

# OAuth 2 scopes of the services this tool uses (LTI AGS 2.0, LTI NRPS 2.0).
SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_MEMBERSHIPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
# Media types of the services' requests and replies.
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEMS_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
MEMBERSHIPS_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
LEARNER_ROLES = ("http://purl.imsglobal.org/vocab/lis/v2/membership#Learner", "Learner")
# The tag of this tool's line items: with the chapter id as resourceId, it finds them again.
TAG = "gptcourse"
ASSERTION_LIFETIME_S = 300  # the signed JWT is used once, at once
TOKEN_MARGIN_S = 60  # a token this close to its expiry is renewed before the next call
HTTP_TIMEOUT_S = 30
KEY_SIZE = 2048

PLATFORM_REQUIRED = ("client_id", "token_url", "lineitems_url", "private_key")
PLATFORM_OPTIONAL = ("issuer", "deployment_id", "keyset_url", "memberships_url", "token_audience")


class LmsError(Exception):
    """The run cannot go on (the message says why and what to do); nothing more is sent."""


# ------------------------------------------------------------------------------------------
# PLATFORM.json: what the LMS's registration of the tool gives
# ------------------------------------------------------------------------------------------

@dataclass
class Platform:
    client_id: str
    token_url: str
    lineitems_url: str
    private_key: str  # absolute path of the tool's private key (PEM)
    memberships_url: str = None  # the course's member list (NRPS); None: the roster gives the ids
    token_audience: str = None  # the `aud` of the signed JWT; the token URL when not given
    issuer: str = None  # the LMS's "platform id"; kept for messages, AGS calls do not need it
    deployment_id: str = None  # likewise
    keyset_url: str = None  # the LMS's public keys: needed to check launches, which this tool has none of

    @property
    def audience(self):
        return self.token_audience or self.token_url


def read_platform(path):
    """The Platform of a PLATFORM.json file. `private_key` is relative to the file's folder."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise LmsError(f"{path} could not be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise LmsError(f"{path} is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise LmsError(f"{path} must hold one JSON object (see docs/grading.md)")
    missing = [name for name in PLATFORM_REQUIRED if not isinstance(data.get(name), str) or not data[name].strip()]
    if missing:
        raise LmsError(f"{path} lacks {', '.join(missing)} (see docs/grading.md: what the LMS's registration gives)")
    unknown = sorted(set(data) - set(PLATFORM_REQUIRED) - set(PLATFORM_OPTIONAL))
    if unknown:
        raise LmsError(f"{path}: unknown field(s) {', '.join(unknown)}; the fields are "
                       f"{', '.join(PLATFORM_REQUIRED + PLATFORM_OPTIONAL)}")
    fields = {name: str(data[name]).strip() for name in PLATFORM_REQUIRED + PLATFORM_OPTIONAL if data.get(name)}
    for name in PLATFORM_URLS:
        if fields.get(name) and not secure_address(fields[name]):
            raise LmsError(f"{path}: {name} must be an https address ({fields[name]}): the tool sends its signed "
                           f"key and the students' scores there (plain http only on this machine's loopback)")
    fields["private_key"] = os.path.join(os.path.dirname(os.path.abspath(path)), fields["private_key"])
    return Platform(**fields)


# The fields of PLATFORM.json that are addresses the tool calls.
PLATFORM_URLS = ("token_url", "lineitems_url", "memberships_url", "keyset_url")


def secure_address(url):
    """https, or http to this machine's loopback (a platform in a test, or tunnelled to here)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    if parts.scheme != "http" or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


# ------------------------------------------------------------------------------------------
# The tool's key pair
# ------------------------------------------------------------------------------------------

def create_key(path):
    """A new RSA key, written to `path` (PEM, readable by its owner only); refuses to replace a
    file there: the LMS knows the public half of that one."""
    key = jwk.JWK.generate(kty="RSA", size=KEY_SIZE)
    pem = key.export_to_pem(private_key=True, password=None)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    # O_EXCL: never over an existing key; 0o600 from the start, not chmod-ed after writing.
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(handle, "wb") as f:
        f.write(pem)
    return key


def load_key(path):
    """The tool's private key from its PEM file."""
    try:
        with open(path, "rb") as f:
            pem = f.read()
    except OSError as exc:
        raise LmsError(f"the tool's private key {path} could not be read ({exc.strerror or exc}); "
                       f"make one with python -m grader lms-keys --key {path}") from None
    try:
        key = jwk.JWK.from_pem(pem)
    except (ValueError, TypeError) as exc:
        raise LmsError(f"{path} is not a PEM private key ({exc})") from None
    if not key.has_private or key.get("kty") != "RSA":
        raise LmsError(f"{path} is not an RSA private key (lms-keys makes one)")
    return key


def key_id(key):
    """The key's id (`kid`): its RFC 7638 thumbprint, so the same key always has the same id
    and a new key another one."""
    return key.thumbprint()


def public_jwk(key):
    """The public half as a JWK, with the id, algorithm and use that LTI platforms look for."""
    public = key.export_public(as_dict=True)
    public.update({"kid": key_id(key), "alg": "RS256", "use": "sig"})
    return public


def key_set(key):
    return {"keys": [public_jwk(key)]}


def public_pem(key):
    return key.export_to_pem().decode("ascii")


# ------------------------------------------------------------------------------------------
# The access token (IMS Security Framework 1.0: OAuth 2 client credentials, the client a signed JWT)
# ------------------------------------------------------------------------------------------

def client_assertion(platform, key):
    """The signed JWT that authenticates the tool at the token URL: issued by and about the
    tool's client id, for the token URL (its audience), valid for a few minutes, used once."""
    now = int(time.time())
    claims = {"iss": platform.client_id, "sub": platform.client_id, "aud": platform.audience,
              "iat": now, "exp": now + ASSERTION_LIFETIME_S, "jti": uuid.uuid4().hex}
    token = jose_jwt.JWT(header={"alg": "RS256", "typ": "JWT", "kid": key_id(key)}, claims=claims)
    token.make_signed_token(key)
    return token.serialize()


def request_token(http, platform, key, scopes):
    """(access token, the scopes granted, seconds it is valid) from the LMS's token URL."""
    form = {"grant_type": "client_credentials", "client_assertion_type": CLIENT_ASSERTION_TYPE,
            "client_assertion": client_assertion(platform, key), "scope": " ".join(scopes)}
    response = send(http, "POST", platform.token_url, data=form, headers={"Accept": "application/json"})
    oauth_error = _json_field(response, "error")
    # RFC 6749 5.2: a client that failed to authenticate gets 401, or 400 with invalid_client
    # (Moodle answers so).
    if response.status_code == 401 or oauth_error == "invalid_client":
        raise LmsError(
            f"the LMS refused the tool's key (HTTP {response.status_code}{', ' + oauth_error if oauth_error else ''} "
            f"from {platform.token_url}): the key registered there for client {platform.client_id} is not the "
            f"public half of {platform.private_key}, or that client id is not the tool's. Print the public key "
            f"with `python -m grader lms-keys --key {platform.private_key}` and paste it into the tool's "
            f"registration (docs/grading.md). Nothing was sent.")
    if response.status_code != 200 or not _json_field(response, "access_token"):
        raise LmsError(f"the LMS gave no access token ({_described(response)}); nothing was sent")
    granted = _json_field(response, "scope")
    # A reply without `scope` grants what was asked (RFC 6749 5.1).
    granted = set(granted.split()) if isinstance(granted, str) else set(scopes)
    lifetime = _json_field(response, "expires_in")
    lifetime = lifetime if isinstance(lifetime, (int, float)) and lifetime > 0 else 3600
    return _json_field(response, "access_token"), granted, lifetime


class Connection:
    """The tool's authorised calls to one LMS: a bearer token, renewed when it runs out."""

    def __init__(self, platform, key, scopes, http=None):
        self.platform = platform
        self.key = key
        self.scopes = list(scopes)
        self.http = http or http_session()
        self.token = None
        self.granted = set()
        self.expires_at = 0.0
        self.renew_token()

    def renew_token(self):
        self.token, self.granted, lifetime = request_token(self.http, self.platform, self.key, self.scopes)
        self.expires_at = time.monotonic() + lifetime

    def call(self, method, url, accept, payload=None, content_type=None):
        """The LMS's response to an authorised request (any status but 401: the caller judges it).
        A 401 is answered once with a new token (the old one may have run out in between); a
        second 401 means the token does not open this service, and stops the run."""
        if time.monotonic() > self.expires_at - TOKEN_MARGIN_S:
            self.renew_token()
        response = self._send(method, url, accept, payload, content_type)
        if response.status_code == 401:
            self.renew_token()
            response = self._send(method, url, accept, payload, content_type)
        if response.status_code == 401:
            raise LmsError(f"the LMS refused the tool's access token for {method} {url} ({_described(response)}): "
                           f"check the services enabled for the tool there (docs/grading.md)")
        return response

    def _send(self, method, url, accept, payload, content_type):
        headers = {"Authorization": f"Bearer {self.token}", "Accept": accept}
        body = None
        if payload is not None:
            headers["Content-Type"] = content_type
            body = json.dumps(payload).encode("utf-8")
        return send(self.http, method, url, data=body, headers=headers)


# An LMS under load answers 429 (too many requests) or 503 (unavailable), often with a
# Retry-After: each request is tried again, waiting what the LMS asks (or a growing pause), a
# bounded number of times; then its answer stands and the caller judges it.
RETRIES = 4
BACKOFF_S = 1.0


def http_session():
    """A requests session that retries a 429 or 503, honouring Retry-After (urllib3's Retry).
    Every method: a refused request was not carried out, and a score's timestamp makes sending it
    again harmless."""
    retry = Retry(total=RETRIES, status_forcelist=(429, 503), backoff_factor=BACKOFF_S, allowed_methods=None,
                  respect_retry_after_header=True, raise_on_status=False)
    session = requests.Session()
    for scheme in ("https://", "http://"):
        session.mount(scheme, HTTPAdapter(max_retries=retry))
    return session


def send(http, method, url, **kwargs):
    """One HTTP request; an LMS that cannot be reached stops the run."""
    try:
        return http.request(method, url, timeout=HTTP_TIMEOUT_S, **kwargs)
    except requests.RequestException as exc:
        raise LmsError(f"the LMS could not be reached at {url} ({exc})") from None


def _json_field(response, name):
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get(name) if isinstance(body, dict) else None


def _described(response):
    """'HTTP 403 Forbidden: <the start of the body>', for messages."""
    text = " ".join((response.text or "").split())[:200]
    return f"HTTP {response.status_code} {response.reason or ''}".rstrip() + (f": {text}" if text else "")


def next_page(response):
    """The URL of the next page of a paged reply (its Link header, rel="next"), or None.
    Moodle writes the relation in typographic quotes (rel=“next”); those count too."""
    for value in response.links.values():
        relation = value.get("rel", "").strip("\"'“”")
        if relation == "next":
            return value.get("url")
    return None


def get_all(connection, url, accept, items_of):
    """Every item of a paged list: `items_of(body)` takes one page's items from its JSON."""
    found = []
    seen = set()
    while url and url not in seen:  # a page that links back to itself ends the list
        seen.add(url)
        response = connection.call("GET", url, accept)
        if response.status_code != 200:
            raise LmsError(f"the LMS refused to list {url} ({_described(response)})")
        try:
            found += items_of(response.json())
        except (ValueError, TypeError, AttributeError, KeyError):
            raise LmsError(f"the LMS's reply from {url} is not the list it should be: "
                           f"{response.text[:200]!r}") from None
        url = next_page(response)
    return found


# ------------------------------------------------------------------------------------------
# Line items: the gradebook's columns (one per chapter)
# ------------------------------------------------------------------------------------------

def find_line_item(connection, chapter, title):
    """The tool's line item for a chapter: the one whose resourceId is the chapter id, else
    the one whose label is the chapter's heading (a column made by hand for the tool); None
    when there is none. Two candidates are an error: which one would be a guess."""
    url = with_query(connection.platform.lineitems_url, {"resource_id": chapter, "tag": TAG})
    # The filters are asked for, and checked here again: an LMS may ignore them.
    items = get_all(connection, url, LINEITEMS_TYPE, lambda body: [i for i in body if isinstance(i, dict)])
    if not any(item.get("resourceId") == chapter for item in items):
        items = get_all(connection, connection.platform.lineitems_url, LINEITEMS_TYPE,
                        lambda body: [i for i in body if isinstance(i, dict)])
    for same in (lambda item: item.get("resourceId") == chapter, lambda item: item.get("label") == title):
        candidates = [item for item in items if same(item) and item.get("id")]
        if len(candidates) > 1:
            raise LmsError(f"the LMS holds {len(candidates)} line items for {chapter} "
                           f"({', '.join(item['id'] for item in candidates)}): delete all but one")
        if candidates:
            return candidates[0]
    return None


def new_line_item(column):
    """The line item to create for a chapter column of the export (grader/outputs/exports.py)."""
    return {"label": column.title, "scoreMaximum": column.max_points, "resourceId": column.key, "tag": TAG}


def create_line_item(connection, item):
    """The created line item (with its `id`, the URL the LMS gave it); LmsError when refused."""
    response = connection.call("POST", connection.platform.lineitems_url, LINEITEM_TYPE, item, LINEITEM_TYPE)
    created = response.json() if response.status_code in (200, 201) and _is_json_object(response) else {}
    if not created.get("id"):
        raise LmsError(f"the LMS did not create the line item {item['label']!r} ({_described(response)}); "
                       f"let the tool manage its columns (Moodle: 'Use this service for grade sync and column "
                       f"management'; Canvas: the line item scope), or add a column titled {item['label']!r} "
                       f"for the tool by hand")
    return created


def _is_json_object(response):
    try:
        return isinstance(response.json(), dict)
    except ValueError:
        return False


def with_query(url, params):
    """`url` with these query parameters added to the ones it has (Moodle's carry type_id)."""
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit(parts._replace(query=query))


def scores_url(line_item_url):
    """A line item's scores service: its URL with /scores added to the path (as AGS 2.0 defines
    it), the query kept (Moodle's line item URLs end in /lineitem?type_id=N)."""
    parts = urlsplit(line_item_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))


# ------------------------------------------------------------------------------------------
# Students: the course's members, and which one each submission is
# ------------------------------------------------------------------------------------------

def _listed(body, name):
    """body[name], which must be a list: a page without it is not the page it should be."""
    if not isinstance(body, dict) or not isinstance(body.get(name), list):
        raise KeyError(name)
    return body[name]


def fetch_learners(connection):
    """The course's active members with a learner role (NRPS 2.0)."""
    members = get_all(connection, connection.platform.memberships_url, MEMBERSHIPS_TYPE,
                      lambda body: [m for m in _listed(body, "members") if isinstance(m, dict)])
    return [m for m in members if m.get("user_id") and m.get("status", "Active") == "Active"
            and any(role in LEARNER_ROLES for role in m.get("roles") or [])]


@dataclass
class Match:
    user_id: str  # the LMS's id of the student: a score's userId
    how: str  # where the id came from, for the report


def members_known_as(names, learners):
    """The learners whose email (any case) or SIS id (lis_person_sourcedid) is one of `names`.
    The LMS's user_id itself is never compared with a submission id: "17" as a file name says
    nothing about the LMS's user 17."""
    wanted = {name.strip().casefold() for name in names if name and name.strip()}
    return [m for m in learners
            if str(m.get("email") or "").strip().casefold() in wanted
            or str(m.get("lis_person_sourcedid") or "").strip().casefold() in wanted]


def match_students(submissions, roster, learners):
    """({submission: Match}, {submission: why it was not matched}).

    The roster's `id` is the LMS's user id, taken as it is (Moodle: the user's id; Canvas: the
    user's id or LTI id), once the member list, when there is one, holds it as a learner. Otherwise the member list decides: the learner whose email or SIS id
    is the submission id, or the roster's email or sis_user_id for it. None or several: not
    matched. Two submissions that lead to one LMS user are both left out.
    """
    matched, unmatched = {}, {}
    for submission in submissions:
        info = roster.get(submission, {})
        if info.get("id") and learners is not None and str(info["id"]) not in {str(m["user_id"]) for m in learners}:
            unmatched[submission] = (f"the roster's id {info['id']!r} is not a student of the LMS course "
                                     f"(its member list): check the roster")
            continue
        if info.get("id"):
            matched[submission] = Match(info["id"], "the roster's id")
            continue
        names = [submission] + [info[k] for k in ("email", "sis_user_id") if info.get(k)]
        if learners is None:
            unmatched[submission] = ("no LMS user id: the roster gives none, and PLATFORM.json has no "
                                     "memberships_url to look the student up")
            continue
        found = members_known_as(names, learners)
        shown = " or ".join(repr(n) for n in dict.fromkeys(names))
        if not found:
            unmatched[submission] = (f"no student of the LMS course has the email or SIS id {shown} "
                                     f"(give the LMS id, email or SIS id in --roster)")
        elif len({m["user_id"] for m in found}) > 1:
            unmatched[submission] = (f"{shown} fits several students of the LMS course "
                                     f"({', '.join(sorted(str(m['user_id']) for m in found))})")
        else:
            matched[submission] = Match(str(found[0]["user_id"]), "the course's member list")
    by_user = {}
    for submission, match in matched.items():
        by_user.setdefault(match.user_id, []).append(submission)
    for user_id, shared in by_user.items():
        if len(shared) > 1:
            for submission in shared:
                del matched[submission]
                unmatched[submission] = (f"the LMS user {user_id} is also matched by "
                                         f"{', '.join(s for s in shared if s != submission)}")
    return matched, unmatched


# ------------------------------------------------------------------------------------------
# Scores
# ------------------------------------------------------------------------------------------

def score_payload(user_id, points, maximum, timestamp):
    """One score (AGS 2.0 Score service): final (FullyGraded), the activity done (Completed)."""
    return {"userId": user_id, "scoreGiven": points, "scoreMaximum": maximum, "timestamp": timestamp,
            "activityProgress": "Completed", "gradingProgress": "FullyGraded"}


def run_timestamp():
    """Now, as AGS wants it: ISO 8601 with milliseconds and the UTC offset."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def post_score(connection, line_item_url, payload):
    """'posted', or 'kept' when the LMS holds a newer grade (HTTP 409); a refusal (another 4xx)
    is returned as its description. A failing LMS (5xx) stops the run."""
    response = connection.call("POST", scores_url(line_item_url), "application/json", payload, SCORE_TYPE)
    if 200 <= response.status_code < 300:
        return "posted"
    if response.status_code == 409:
        return "kept"
    if response.status_code >= 500:
        raise LmsError(f"the LMS failed on a score ({_described(response)})")
    return _described(response)


# ------------------------------------------------------------------------------------------
# The whole run
# ------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    unmatched: dict  # {submission: why}: students skipped
    posted: int = 0
    kept: list = field(default_factory=list)  # (submission, chapter): the LMS holds a newer grade
    refused: list = field(default_factory=list)  # (submission, chapter, why)
    chapters_failed: list = field(default_factory=list)  # (chapter, why): no line item

    @property
    def complete(self):
        return not (self.refused or self.unmatched or self.chapters_failed)


def selected_columns(records, chapters):
    """The export's chapter columns (title, tasks, maximum) for the chosen chapters."""
    columns = exports.columns(records, "chapter")
    if not chapters:
        return columns
    present = [c.key for c in columns]
    unknown = [name for name in chapters if name not in present]
    if unknown:
        raise LmsError(f"no records of chapter {', '.join(unknown)} in grades.json; its chapters are "
                       f"{', '.join(present)}")
    return [c for c in columns if c.key in chapters]


def needed_scopes(platform):
    scopes = [SCOPE_LINEITEM, SCOPE_SCORE]
    return scopes + [SCOPE_MEMBERSHIPS] if platform.memberships_url else scopes


def check_granted(connection):
    """The LMS may grant fewer scopes than asked (Moodle grants those the tool's settings
    allow): say which setting is missing before anything is sent."""
    missing = [s for s in connection.scopes if s not in connection.granted]
    if missing:
        raise LmsError(f"the LMS did not grant the tool {', '.join(missing)}: enable the tool's Assignment and "
                       f"Grade Services (line items and scores) and, with memberships_url, its Names and Role "
                       f"Provisioning (docs/grading.md). Nothing was sent.")


def push(out_dir, platform_path, chapters=None, roster_path=None, dry_run=False, http=None, say=print):
    """Send the scores of a graded folder to the LMS; returns the Outcome. LmsError stops it."""
    try:
        records = exports.load_records(out_dir)
        roster = exports.read_roster(roster_path) if roster_path else {}
    except exports.ExportError as exc:
        raise LmsError(str(exc)) from None
    if not records:
        raise LmsError(f"{out_dir}/grades.json holds no graded task")
    columns = selected_columns(records, chapters)
    table = exports.scores_by_student(records, columns)
    platform = read_platform(platform_path)
    key = load_key(platform.private_key)

    connection = Connection(platform, key, needed_scopes(platform), http)
    check_granted(connection)
    submissions = sorted(s for s, row in table.items() if any(row[c.key] is not None for c in columns))
    learners = fetch_learners(connection) if platform.memberships_url else None
    matched, unmatched = match_students(submissions, roster, learners)
    outcome = Outcome(unmatched=unmatched)
    say(f"LMS {platform.issuer or urlsplit(platform.token_url).netloc}, client {platform.client_id}: "
        f"{len(matched)} of {len(submissions)} students matched"
        + (f" ({len(learners)} learners in the course)" if learners is not None else ""))
    for submission, why in sorted(unmatched.items()):
        say(f"  skipped {submission}: {why}")

    timestamp = run_timestamp()
    for column in columns:
        _push_chapter(connection, column, table, matched, timestamp, dry_run, outcome, say)
    return outcome


def _push_chapter(connection, column, table, matched, timestamp, dry_run, outcome, say):
    """The line item of one chapter (found or created) and its students' scores."""
    item = find_line_item(connection, column.key, column.title)
    if item is None and dry_run:
        say(f"{column.key}: would create the line item {new_line_item(column)}")
        item_url = "(new line item)"
    elif item is None:
        try:
            item = create_line_item(connection, new_line_item(column))
        except LmsError as exc:  # this chapter only: the others may have their columns
            outcome.chapters_failed.append((column.key, str(exc)))
            say(f"{column.key}: not sent: {exc}")
            return
        item_url = item["id"]
        say(f"{column.key}: created the line item {item_url}")
    else:
        item_url = item["id"]
        say(f"{column.key}: line item {item_url}")
        if item.get("scoreMaximum") not in (None, column.max_points):
            say(f"  note: its maximum is {item['scoreMaximum']}, the chapter's is {exports.number(column.max_points)}; "
                f"each score says its own maximum")
    sent = 0
    for submission, match in sorted(matched.items()):
        points = table[submission][column.key]
        if points is None:
            continue  # no notebook of this chapter: nothing to send (empty is not 0)
        payload = score_payload(match.user_id, points, column.max_points, timestamp)
        if dry_run:
            say(f"  would send {submission} (LMS user {match.user_id}, from {match.how}): "
                f"{json.dumps(payload)}")
            continue
        result = post_score(connection, item_url, payload)
        if result == "posted":
            sent += 1
        elif result == "kept":
            outcome.kept.append((submission, column.key))
            say(f"  kept {submission}'s grade in the LMS: it is newer than this run's score (HTTP 409)")
        else:
            outcome.refused.append((submission, column.key, result))
            say(f"  refused {submission} (LMS user {match.user_id}): {result}")
    outcome.posted += sent
    if not dry_run:
        say(f"  {sent} scores sent")


# ------------------------------------------------------------------------------------------
# Command line: python -m grader lms-keys ... | push-lms ...
# ------------------------------------------------------------------------------------------

def add_parser(commands):
    """Both commands of this module (grader/__main__.py calls this once for the two)."""
    k = commands.add_parser("lms-keys", help="make the tool's key pair for LTI 1.3 and print its public half")
    k.add_argument("--key", required=True, metavar="KEY.pem",
                   help="the private key: made when the file does not exist, read when it does")
    k.add_argument("--format", default="all", choices=["all", "pem", "jwk", "jwks"],
                   help="pem (Moodle's 'RSA key'), jwk (Canvas's 'Public JWK'), jwks (a key set), all (default)")
    p = commands.add_parser("push-lms", help="send a graded folder's chapter scores to the LMS (LTI 1.3 AGS)")
    p.add_argument("dir", metavar="DIR", help="the folder that `grade --out` wrote (its grades.json)")
    p.add_argument("--platform", required=True, metavar="PLATFORM.json",
                   help="the LMS's registration of the tool and the private key's path (docs/grading.md)")
    p.add_argument("--chapter", action="append", metavar="NAME",
                   help="only this chapter (its id, e.g. 02_attention); repeat for more; default: all graded")
    p.add_argument("--roster", metavar="ROSTER.csv",
                   help="columns: submission, and id (the LMS's user id) or email or sis_user_id")
    p.add_argument("--dry-run", action="store_true",
                   help="read from the LMS but change nothing: print the line items and scores it would send")
    return p


def main(args):
    if args.command == "lms-keys":
        return _keys_main(args)
    try:
        outcome = push(args.dir, args.platform, args.chapter, args.roster, args.dry_run)
    except LmsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print("dry run: nothing was sent")
        return 0 if not (outcome.unmatched or outcome.chapters_failed) else 1
    print(f"{outcome.posted} scores sent" + (f", {len(outcome.kept)} newer grades kept" if outcome.kept else "")
          + ("" if outcome.complete else "; see above for what was skipped (running again is safe)"))
    return 0 if outcome.complete else 1


def _keys_main(args):
    if os.path.exists(args.key):
        try:
            key = load_key(args.key)
        except LmsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        made = False
    else:
        key = create_key(args.key)
        made = True
    if args.format == "pem":
        print(public_pem(key), end="")
    elif args.format == "jwk":
        print(json.dumps(public_jwk(key), indent=2))
    elif args.format == "jwks":
        print(json.dumps(key_set(key), indent=2))
    else:
        print(f"{'Made' if made else 'Read'} the tool's private key {os.path.abspath(args.key)} (keep it secret; "
              f"PLATFORM.json's \"private_key\" names it). Its public half:\n")
        print("Moodle (Public key type: RSA key; field 'Public key'):")
        print(public_pem(key))
        print("Canvas (JWK Method: Public JWK; field 'Public JWK'):")
        print(json.dumps(public_jwk(key), indent=2) + "\n")
        print("A key set (JWKS), for an LMS that asks for one:")
        print(json.dumps(key_set(key), indent=2))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m grader.outputs.lms")
    add_parser(parser.add_subparsers(dest="command", required=True))
    sys.exit(main(parser.parse_args()))
