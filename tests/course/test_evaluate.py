"""gptcourse.evaluate: chrF scores against the references, and a judge model asked over
Ollama's HTTP API (here a fake server on 127.0.0.1 that records what it was sent)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from factory import one_line
from gptcourse import evaluate
from gptcourse.messages import SHOWN_WIDTH

ENTRIES = [
    {"instruction": "Name the capital of France.", "input": "", "output": "The capital of France is Paris."},
    {"instruction": "Convert to passive voice.", "input": "The cat chased the mouse.",
     "output": "The mouse was chased by the cat."},
    {"instruction": "Give a synonym of 'fast'.", "input": "", "output": "A synonym of 'fast' is 'quick'."},
]
RESPONSES = ["Paris is the capital of France.", "The mouse was chased by the cat.", "BROKEN-RESPONSE"]


def format_input(entry):
    """A stand-in for the student's format_input (the Alpaca prompt of the book)."""
    text = f"### Instruction:\n{entry['instruction']}"
    return text + (f"\n\n### Input:\n{entry['input']}" if entry["input"] else "")


# --- chrF ----------------------------------------------------------------------------------------


def test_chrf_of_an_identical_response_is_100_and_of_an_empty_one_0():
    assert evaluate.chrf_scores(["The mouse was chased."], ["The mouse was chased."]) == [pytest.approx(100.0)]
    assert evaluate.chrf_scores([""], ["The mouse was chased."]) == [0.0]


def test_chrf_ranks_a_paraphrase_above_an_unrelated_response():
    reference = "The capital of France is Paris."
    paraphrase, unrelated = evaluate.chrf_scores(
        ["Paris is the capital of France.", "Bananas grow on tall green plants."], [reference, reference])
    assert unrelated < 20
    assert paraphrase > 50 and paraphrase > unrelated


def test_chrf_compares_each_response_with_its_own_reference_only():
    scores = evaluate.chrf_scores(["alpha beta gamma", "delta epsilon"], ["alpha beta gamma", "alpha beta gamma"])
    assert scores[0] == pytest.approx(100.0) and scores[1] < 20


def test_corpus_chrf_lies_between_0_and_100_and_is_100_for_identical_texts():
    score = evaluate.corpus_chrf(RESPONSES, [entry["output"] for entry in ENTRIES])
    assert 0 < score < 100
    assert evaluate.corpus_chrf(["same text", "again"], ["same text", "again"]) == pytest.approx(100.0)


@pytest.mark.parametrize("function", [evaluate.chrf_scores, evaluate.corpus_chrf])
def test_chrf_rejects_lists_of_different_lengths(function):
    with pytest.raises(ValueError, match="got 2 responses and 1 references"):
        function(["a", "b"], ["a"])


# --- parse_score and pick_judge_model ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("85", 85),
        ("Score: 85", 85),
        ("85/100", 85),
        ("I'd say 7.", 7),
        ("0", 0),
        ("100", 100),
        ("none", None),
        ("", None),
        ("150", None),
        ("-5", None),
        ("7.5", None),
    ],
)
def test_parse_score(text, score):
    assert evaluate.parse_score(text) == score


def test_pick_judge_model_follows_the_order_of_preference():
    models = ["mistral:7b", "phi3:mini", "llama3.1:8b"]
    assert evaluate.pick_judge_model(models) == "llama3.1:8b"  # llama3 is missing: llama3.1 comes next
    assert evaluate.pick_judge_model(models + ["llama3:latest"]) == "llama3:latest"
    assert evaluate.pick_judge_model(["llama3.2-vision:11b", "phi3:mini"]) == "phi3:mini"  # the family must match
    assert evaluate.pick_judge_model(["gemma:2b", "qwen2:7b"]) == "gemma:2b"  # none preferred: the first
    assert evaluate.pick_judge_model(["qwen2:7b", "gemma:2b"], preferred=("gemma",)) == "gemma:2b"
    assert evaluate.pick_judge_model([]) is None


def test_judge_prompt_holds_the_formatted_instruction_the_reference_and_the_response():
    prompt = evaluate.judge_prompt(ENTRIES[1], "The cat was chased.", format_input)
    assert format_input(ENTRIES[1]) in prompt
    assert "The mouse was chased by the cat." in prompt and "The cat was chased." in prompt
    assert "0" in prompt and "100" in prompt
    assert prompt.endswith("Respond with the integer number only.")


# --- A fake Ollama server ------------------------------------------------------------------------


class FakeOllama(ThreadingHTTPServer):
    """Answers like Ollama: GET /api/tags lists two models; POST /api/chat answers every prompt
    with "Score: 42", except prompts holding a key of ``answers`` (answered with its value) or
    of ``fail_on`` (HTTP 500). Every chat request's JSON body is kept in ``requests``."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), FakeOllamaHandler)
        self.requests = []
        self.answers = {}
        self.fail_on = set()
        self.tags_body = json.dumps({"models": [{"name": "phi3:mini"}, {"name": "llama3:latest"}]})

    @property
    def host(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class FakeOllamaHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/api/tags":
            self._send(200, self.server.tags_body)
        else:
            self._send(404, "{}")

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        prompt = body["messages"][0]["content"]
        if self.path != "/api/chat" or any(key in prompt for key in self.server.fail_on):
            self._send(500, json.dumps({"error": "the model crashed"}))
            return
        answer = next((text for key, text in self.server.answers.items() if key in prompt), "Score: 42")
        self._send(200, json.dumps({"model": body["model"], "message": {"role": "assistant", "content": answer},
                                    "done": True}))

    def _send(self, status, text):
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # keep the test output quiet
        pass


@pytest.fixture
def ollama():
    server = FakeOllama()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_ollama_models_lists_the_names_the_server_offers(ollama):
    assert evaluate.ollama_models(ollama.host) == ["phi3:mini", "llama3:latest"]
    assert evaluate.pick_judge_model(evaluate.ollama_models(ollama.host)) == "llama3:latest"


def test_ollama_models_is_empty_when_the_answer_is_not_a_model_list(ollama):
    ollama.tags_body = "this is not JSON"
    assert evaluate.ollama_models(ollama.host) == []
    ollama.tags_body = json.dumps({"something": "else"})
    assert evaluate.ollama_models(ollama.host) == []


def test_ollama_models_is_empty_when_nothing_listens():
    with socket.socket() as probe:  # a port that was free a moment ago, and nobody listens on now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert evaluate.ollama_models(f"http://127.0.0.1:{port}", timeout=2.0) == []


def test_ask_ollama_sends_a_repeatable_chat_request_and_returns_the_answer(ollama):
    answer = evaluate.ask_ollama("How good is it?", "llama3:latest", host=ollama.host)

    assert answer == "Score: 42"
    (request,) = ollama.requests
    assert request == {
        "model": "llama3:latest",
        "messages": [{"role": "user", "content": "How good is it?"}],
        "stream": False,
        "options": {"seed": 123, "temperature": 0, "num_ctx": 2048},
    }


def test_judge_responses_asks_about_every_response_in_order(ollama):
    ollama.answers = {"Convert to passive voice.": "90/100"}

    scores = evaluate.judge_responses(ENTRIES, RESPONSES, format_input, "llama3:latest", host=ollama.host)

    assert scores == [42, 90, 42]
    assert [request["model"] for request in ollama.requests] == ["llama3:latest"] * 3
    assert all(request["stream"] is False and request["options"]["temperature"] == 0 for request in ollama.requests)
    for request, entry, response in zip(ollama.requests, ENTRIES, RESPONSES):
        prompt = request["messages"][0]["content"]
        assert prompt == evaluate.judge_prompt(entry, response, format_input)
        assert entry["instruction"] in prompt and entry["output"] in prompt and response in prompt


def test_judge_responses_goes_on_after_a_failed_request_and_says_so(ollama, capsys):
    ollama.fail_on = {"BROKEN-RESPONSE"}
    ollama.answers = {"passive voice": "I cannot judge this."}

    scores = evaluate.judge_responses(ENTRIES, RESPONSES, format_input, "phi3:mini", host=ollama.host)

    assert scores == [42, None, None]
    assert len(ollama.requests) == 3
    said = capsys.readouterr().out
    printed = one_line(said)  # one message, broken between words for the page
    assert printed.startswith("judging: 2 of 3 responses got no score")
    assert "1 request failed" in printed and "500" in printed and "1 answer held no score" in printed
    assert max(len(line) for line in said.splitlines()) <= SHOWN_WIDTH


def test_judge_responses_prints_nothing_when_every_response_got_a_score(ollama, capsys):
    assert evaluate.judge_responses(ENTRIES[:1], RESPONSES[:1], format_input, "m", host=ollama.host) == [42]
    assert capsys.readouterr().out == ""


def test_judge_responses_gives_none_for_every_response_when_no_server_answers():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    scores = evaluate.judge_responses(ENTRIES, RESPONSES, format_input, "m", host=f"http://127.0.0.1:{port}",
                                      timeout=2.0)
    assert scores == [None, None, None]


def test_judge_responses_rejects_lists_of_different_lengths():
    with pytest.raises(ValueError, match="got 3 entries and 2 responses"):
        evaluate.judge_responses(ENTRIES, RESPONSES[:2], format_input, "m")


# --- Reading the scores --------------------------------------------------------------------------


def numbered_entries(count):
    return [{"instruction": f"instruction {i}", "input": "", "output": f"reference {i}"} for i in range(count)]


def test_best_and_worst_lists_the_highest_then_the_lowest_scores():
    entries = numbered_entries(8)
    responses = [f"response {i}" for i in range(8)]
    scores = [50, 90, 10, 70, 30, 90, 5.04, 60]

    table = evaluate.best_and_worst(entries, responses, scores, k=3)

    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == ["rank", "score", "instruction", "reference", "response"]
    assert list(table["rank"]) == ["best 1", "best 2", "best 3", "worst 1", "worst 2", "worst 3"]
    assert list(table["score"]) == [90, 90, 70, 5.0, 10, 30]
    # Equal scores keep the order of the data: entry 1 before entry 5.
    assert list(table["response"]) == ["response 1", "response 5", "response 3", "response 6", "response 2",
                                       "response 4"]
    assert table["instruction"][0] == "instruction 1" and table["reference"][0] == "reference 1"


def test_best_and_worst_shortens_long_texts_to_one_line_and_adds_the_input():
    entries = [{"instruction": "Rewrite the sentence.", "input": "The car is fast.", "output": "word " * 40},
               {"instruction": "Say hi.", "input": "", "output": "Hi."}]
    responses = ["first line\nsecond line", "x" * 200]

    table = evaluate.best_and_worst(entries, responses, [80.0, 20.0], k=1)

    best, worst = table.iloc[0], table.iloc[1]
    assert best["instruction"] == "Rewrite the sentence. — The car is fast."
    assert best["response"] == "first line second line"
    assert len(best["reference"]) == evaluate.MAX_CELL_CHARS and best["reference"].endswith("…")
    assert best["reference"].startswith("word word")
    assert worst["response"] == "x" * (evaluate.MAX_CELL_CHARS - 1) + "…"
    assert worst["instruction"] == "Say hi."


@pytest.mark.parametrize(
    ("scores", "ranks", "rows"),
    [
        ([40, 80, 60, 20], ["best 1", "best 2", "worst 1", "worst 2"], [1, 2, 3, 0]),
        ([40, 80, 60], ["best 1", "best 2", "worst 1"], [1, 2, 0]),
        ([40], ["best 1"], [0]),
        ([], [], []),
        ([None, 30, None, 70], ["best 1", "worst 1"], [3, 1]),  # unscored responses are left out
    ],
)
def test_best_and_worst_of_few_entries_shows_each_once(scores, ranks, rows):
    entries = numbered_entries(len(scores))
    table = evaluate.best_and_worst(entries, [f"response {i}" for i in range(len(scores))], scores, k=3)
    assert list(table["rank"]) == ranks
    assert list(table["response"]) == [f"response {i}" for i in rows]


def test_best_and_worst_rejects_bad_arguments():
    with pytest.raises(ValueError, match="got 2 entries and 1 scores"):
        evaluate.best_and_worst(numbered_entries(2), ["a", "b"], [1])
    with pytest.raises(ValueError, match="k must be at least 1"):
        evaluate.best_and_worst(numbered_entries(2), ["a", "b"], [1, 2], k=0)


def test_describe_scores():
    assert evaluate.describe_scores([10, 20, 60]) == "mean 30.0, median 20.0, from 10.0 to 60.0 over 3 responses"
    assert evaluate.describe_scores([None, 42.04, None]) == (
        "mean 42.0, median 42.0, from 42.0 to 42.0 over 1 response (2 without a score)")
    assert evaluate.describe_scores([None]) == "no scores (1 without a score)"
    assert evaluate.describe_scores([]) == "no scores"


def test_the_student_package_does_not_import_the_grader():
    source = evaluate.__loader__.get_source(evaluate.__name__)
    assert "import grader" not in source and "from grader" not in source
