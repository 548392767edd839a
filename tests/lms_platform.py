"""An LTI 1.3 platform (an LMS's side of LTI Advantage) served over HTTP, for the tests of
`python -m grader push-lms` (grader/outputs/lms.py).

The protocol is lti1p3platform's, a platform implementation from PyPI that we did not write:
its platform configuration checks the tool's signed JWT against the tool's registered key set
and issues the access token (LTI1P3PlatformConfAbstract.get_access_token); its services check
the bearer token, its scopes and the HTTP method, and turn our answers into status codes
(AssignmentsGradesService for line items and scores, NamesRoleProvisioningService for the
member list). That library is framework-agnostic: a platform built on it supplies the storage
(the abstract find_lineitems, create_lineitem, update_score, get_member_data_page, ...) and the
web framework around it (its own adapters are for Django's launches). Both are here, as small
as they can be: a course held in dicts, and the standard library's HTTP server, which routes
each URL to the library's handler and writes its Response as the library's Django adapter
does (2xx: the result's "content" as the body and "next" as a Link header; else {"error": ...}).

The token endpoint's HTTP answer to the library's exceptions is ours too (the library leaves
it to the framework): RFC 6749 5.2's 400 invalid_request / unsupported_grant_type and 401
invalid_client for a JWT that is not the tool's.

Line item URLs have Moodle's shape: .../lineitems/N/lineitem?type_id=3, so the scores URL
(.../lineitem/scores?type_id=3) keeps a query, and every service call must carry type_id.
The course store keeps what the rules of AGS ask of a platform that the library leaves to the
store: a score older than the result it would replace is refused (409), a score for someone
who is not a learner of the course is refused (400, as Moodle does).
"""
import datetime
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import jwt
from jwcrypto import jwk
from lti1p3platform.exceptions import (LineItemNotFoundException, LtiException, LtiServiceException,
                                       MissingRequiredClaim, UnsupportedGrantType)
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService

ISSUER = "https://lms.test"
CLIENT_ID = "tool-client-17"
DEPLOYMENT_ID = "deployment-1"
COURSE = "7"
TYPE_ID = "3"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


def member(user_id, email=None, sourcedid=None, roles=(LEARNER,), status="Active"):
    """A member of the course as NRPS lists it."""
    found = {"user_id": user_id, "roles": list(roles), "status": status}
    if email:
        found["email"] = email
    if sourcedid:
        found["lis_person_sourcedid"] = sourcedid
    return found


class Course:
    """What the LMS course holds: members, line items, results; and a log of the requests."""

    def __init__(self, members):
        self.members = list(members)
        self.line_items = {}  # number -> line item (its id is its URL)
        self.results = {}  # (line item number, user id) -> the score that stands
        self.score_requests = []  # every score POSTed, refused or not
        self.token_requests = []  # the form of every token request
        self.allow_creating = True
        self.fail_scores_after = None  # scores accepted before the LMS starts failing (HTTP 500)
        self.page_size = 2  # line items per page, to make the tool follow the Link header

    def learner_ids(self):
        return {m["user_id"] for m in self.members if LEARNER in m["roles"]}

    def results_of(self, resource_id):
        """{user id: scoreGiven} of the line item with this resourceId."""
        numbers = [n for n, item in self.line_items.items() if item.get("resourceId") == resource_id]
        return {user: score["scoreGiven"] for (n, user), score in self.results.items() if n in numbers}


class Gradebook(AssignmentsGradesService):
    """The library's Assignment and Grade Services over the Course's dicts."""

    def __init__(self, course, base_url, request, platform_config):
        self.course = course
        self.base_url = base_url
        super().__init__(request, platform_config, f"{base_url}/courses/{COURSE}/lineitems")

    def line_item_url(self, number):
        return f"{self.base_url}/courses/{COURSE}/lineitems/{number}/lineitem?type_id={TYPE_ID}"

    def find_lineitems(self, page=1, limit=None, line_item_id=None, resource_link_id=None, resource_id=None, tag=None):
        items = [item for item in self.course.line_items.values()
                 if (resource_id is None or item.get("resourceId") == resource_id)
                 and (tag is None or item.get("tag") == tag)]
        size = limit or self.course.page_size
        start = (page - 1) * size
        return {"content": items[start:start + size], "has_next": start + size < len(items)}

    def find_lineitem(self, line_item_id):
        if line_item_id not in self.course.line_items:
            raise LineItemNotFoundException(line_item_id)
        return self.course.line_items[line_item_id]

    def create_lineitem(self, creation_data):
        if not self.course.allow_creating:
            raise LtiServiceException("this platform does not let tools create line items", 403)
        if not creation_data or "label" not in creation_data or "scoreMaximum" not in creation_data:
            raise LtiServiceException("a line item needs a label and a scoreMaximum", 400)
        number = str(len(self.course.line_items) + 1)
        item = dict(creation_data, id=self.line_item_url(number))
        self.course.line_items[number] = item
        return item

    def update_lineitem(self, update_data):
        number = update_data["id"]
        self.find_lineitem(number)
        self.course.line_items[number].update({k: v for k, v in update_data.items() if k != "id"})
        return self.course.line_items[number]

    def delete_lineitem(self, line_item_id):
        self.find_lineitem(line_item_id)
        del self.course.line_items[line_item_id]

    def update_score(self, line_item_id, score):
        self.find_lineitem(line_item_id)
        self.course.score_requests.append((line_item_id, score))
        required = ("userId", "timestamp", "activityProgress", "gradingProgress")
        if not isinstance(score, dict) or any(name not in score for name in required):
            raise LtiServiceException(f"a score needs {', '.join(required)}", 400)
        if score["userId"] not in self.course.learner_ids():
            raise LtiServiceException(f"user {score['userId']} is not a learner of this course", 400)
        failing_from = self.course.fail_scores_after
        if failing_from is not None and len(self.course.score_requests) > failing_from:
            raise LtiServiceException("the gradebook is down", 500)
        key = (line_item_id, score["userId"])
        standing = self.course.results.get(key)
        if standing and _when(standing["timestamp"]) >= _when(score["timestamp"]):
            return UpdateScoreStatus.OLD_TIMESTAMP
        self.course.results[key] = score
        return UpdateScoreStatus.SUCCESS if standing else UpdateScoreStatus.CREATED

    def get_results(self, line_item_id, page=1, limit=None, user_id=None):
        self.find_lineitem(line_item_id)
        content = [{"userId": user, "resultScore": score.get("scoreGiven"), "resultMaximum": score.get("scoreMaximum"),
                    "scoreOf": self.line_item_url(line_item_id)}
                   for (number, user), score in self.course.results.items()
                   if number == line_item_id and (user_id is None or user == user_id)]
        return {"content": content, "has_next": False}


def _when(timestamp):
    return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


class Members(NamesRoleProvisioningService):
    """The library's Names and Role Provisioning Service over the Course's member list."""

    def __init__(self, course, base_url, request, platform_config):
        self.course = course
        super().__init__(request, platform_config, f"{base_url}/courses/{COURSE}/memberships")

    def get_member_data_page(self, page=1, limit=None, role=None, since=None):
        return {"content": [dict(m) for m in self.course.members], "has_next": False}

    def get_context_by_id(self):
        return Context(id=COURSE, label="GPT", title="Build a GPT from scratch")


class PlatformConfig(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, registration):
        self._registration = registration

    def get_registration_by_params(self, **kwargs):
        return self._registration


class ServedRequest(Request):
    """An HTTP request of the standard library's server, as the library reads requests."""

    def build_metadata(self, raw):
        content_type = raw["headers"].get("Content-Type", "")
        body = raw["body"]
        query = dict(parse_qsl(raw["query"]))
        # The library pages with integers; a web framework would convert these query values.
        for name in ("page", "limit"):
            if name in query and query[name].isdigit():
                query[name] = int(query[name])
        return {
            "method": raw["method"],
            "form_data": dict(parse_qsl(body.decode("utf-8"))) if "form-urlencoded" in content_type else {},
            "json": json.loads(body) if body and "json" in content_type else None,
            "get_data": query,
            "headers": raw["headers"],
            "content_type": content_type,
            "path": raw["path"],
        }


class LmsPlatform:
    """The platform on a free port of 127.0.0.1 (start/stop, or `with`), with one course."""

    def __init__(self, members):
        self.course = Course(members)
        key = jwk.JWK.generate(kty="RSA", size=2048)
        self.registration = (Registration().set_iss(ISSUER).set_client_id(CLIENT_ID)
                             .set_deployment_id(DEPLOYMENT_ID)
                             .set_platform_private_key(key.export_to_pem(private_key=True, password=None).decode())
                             .set_platform_public_key(key.export_to_pem().decode()))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.platform = self
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = None
        self.lock = threading.Lock()
        # Answers served before the real ones, for requests whose path ends with the key: a
        # platform under load (429, 503 with Retry-After) or one that answers oddly.
        self.faults = {}
        self.requests_seen = []  # (method, path) of every request, in order

    def register_tool(self, jwks):
        """The tool's public key set, as an administrator pastes it into the registration."""
        self.registration.set_tool_key_set(jwks)

    def platform_json(self, private_key, memberships=True):
        """PLATFORM.json's fields for this platform, as its registration page would show them."""
        fields = {"issuer": ISSUER, "client_id": CLIENT_ID, "deployment_id": DEPLOYMENT_ID,
                  "token_url": f"{self.base_url}/token", "keyset_url": f"{self.base_url}/jwks",
                  "lineitems_url": f"{self.base_url}/courses/{COURSE}/lineitems", "private_key": private_key}
        if memberships:
            fields["memberships_url"] = f"{self.base_url}/courses/{COURSE}/memberships"
        return fields

    def start(self):
        # A short poll: stop() waits for the server's loop to look up (0.5 s by default).
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="lms-platform", daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- one request -----------------------------------------------------------------------

    def answer(self, raw):
        """(status, headers, body) for a request."""
        self.requests_seen.append((raw["method"], raw["path"]))
        for ending, answers in self.faults.items():
            if raw["path"].endswith(ending) and answers:
                return answers.pop(0)
        config = PlatformConfig(registration=self.registration)
        request = ServedRequest(raw)
        path = raw["path"]
        if path == "/token" and raw["method"] == "POST":
            return self._token(config, request.form_data)
        if path == "/jwks" and raw["method"] == "GET":
            return 200, {}, config.get_jwks()
        if not path.startswith(f"/courses/{COURSE}/"):
            return 404, {}, {"error": "no such course"}
        if path.endswith("/memberships"):
            service = Members(self.course, self.base_url, request, config)
            return self._served(service, service.handle_get_members)
        service = Gradebook(self.course, self.base_url, request, config)
        if path.endswith("/lineitems"):
            handler = service.handle_create_lineitem if raw["method"] == "POST" else service.handle_get_lineitems
            return self._served(service, handler)
        # Moodle's shape: a line item's services must name the tool's type.
        found = re.fullmatch(rf"/courses/{COURSE}/lineitems/(\d+)/lineitem(/scores|/results)?", path)
        if not found or request.get_data.pop("type_id", None) != TYPE_ID:
            return 404, {}, {"error": "no such line item"}
        number, tail = found.groups()
        handler = {None: {"GET": service.handle_get_lineitem, "PUT": service.handle_update_lineitem,
                          "DELETE": service.handle_delete_lineitem}.get(raw["method"], service.handle_get_lineitem),
                   "/scores": service.handle_update_score, "/results": service.handle_get_results}[tail]
        return self._served(service, handler, line_item_id=number)

    def _token(self, config, form):
        self.course.token_requests.append(dict(form))
        try:
            return 200, {}, config.get_access_token(form)
        except MissingRequiredClaim as exc:
            return 400, {}, {"error": "invalid_request", "error_description": str(exc)}
        except UnsupportedGrantType:
            return 400, {}, {"error": "unsupported_grant_type"}
        except (LtiException, jwt.PyJWTError) as exc:
            return 401, {}, {"error": "invalid_client", "error_description": str(exc)}

    def _served(self, service, handler, **kwargs):
        try:
            response = service.handle_resp(handler, **kwargs)
        except (LtiException, jwt.PyJWTError) as exc:  # a bearer token the library could not read
            return 401, {}, {"error": str(exc)}
        headers = {"Content-Type": response.media_type}
        if 200 <= response.code < 300:
            result = response.result
            if isinstance(result, dict) and result.get("next"):
                headers["Link"] = f'<{result["next"]}>; rel="next"'
            body = result["content"] if isinstance(result, dict) and "content" in result else result
            return response.code, headers, body
        return response.code, headers, {"error": response.message}


class _Handler(BaseHTTPRequestHandler):
    def _answer(self):
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = {"method": self.command, "path": parts.path, "query": parts.query,
               "headers": self.headers, "body": self.rfile.read(length)}
        platform = self.server.platform
        with platform.lock:
            try:
                status, headers, body = platform.answer(raw)
            except Exception as exc:  # a bug of this platform shows in the test's failure
                status, headers, body = 500, {}, {"error": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        headers.setdefault("Content-Type", "application/json")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args):
        pass  # quiet: the test reads the course's logs instead
