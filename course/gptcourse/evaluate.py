"""Scoring the answers of an instruction-tuned model (chapter 09).

After fine-tuning, the model writes a response to every instruction of the test set, and
each test entry comes with a reference answer (``entry["output"]``). How good are the
responses? This module scores them in two ways.

1. Offline, with chrF. chrF (character n-gram F-score) counts the runs of 1 to 6
   characters that a response shares with its reference and combines precision and recall
   into one number from 0 (nothing in common) to 100 (the same text). We use the
   implementation of the sacrebleu package, so the numbers compare with those of papers.
   chrF needs nothing but the two texts, runs in milliseconds and gives the same number every
   time. But it rewards shared *wording*, not shared *meaning*: "The capital of France is
   Paris." against the reference "Paris." scores low though it is right, and a response that
   copies most of the reference's words but gets the one that matters wrong scores high.

2. With a judge. When an Ollama server (https://ollama.com) runs on this machine, a larger
   model is shown the instruction, the reference and the response, and asked for a score
   from 0 to 100, as the book "Build a Large Language Model (From Scratch)" does in chapter 7
   with Llama 3. A judge reads for meaning, but it is itself a language model: its scores are
   not exact, and they depend on the judge and on how the question is put to it.

Nothing here needs the internet: the judge is asked over HTTP on localhost (with the
standard library's urllib), and when no server answers, ``ollama_models`` says so by
returning an empty list, so a notebook can skip the judge and keep the chrF scores.
"""

from __future__ import annotations

import http.client
import json
import re
import statistics
import urllib.request

import pandas as pd
from sacrebleu.metrics import CHRF
from gptcourse.messages import say
from gptcourse.progress import progress_bar

OLLAMA_HOST = "http://localhost:11434"  # where `ollama serve` listens unless told otherwise
MAX_CELL_CHARS = 80  # longer texts are shortened in best_and_worst, so the table fits a notebook

# The ways a request to a server can fail: URLError (nothing listens), HTTPError (an error
# status), socket timeouts and resets are all OSErrors; a garbled HTTP answer raises an
# HTTPException; an answer that is not the JSON we expect raises ValueError, KeyError or
# TypeError.
REQUEST_ERRORS = (OSError, http.client.HTTPException, ValueError, KeyError, TypeError)


# --- Offline: chrF against the reference -----------------------------------------------------


def chrf_scores(responses, references) -> list[float]:
    """The chrF score (0 to 100) of each response against its own reference answer.

    ``responses`` and ``references`` are lists of strings of the same length: response ``i``
    is compared with reference ``i`` only. An empty response scores 0.0.
    """
    responses, references = list(responses), list(references)
    _check_same_length(responses, references, "responses", "references")
    metric = CHRF()
    return [metric.sentence_score(response, [reference]).score
            for response, reference in zip(responses, references)]


def corpus_chrf(responses, references) -> float:
    """One chrF score (0 to 100) for all the responses together.

    The character n-gram counts of all pairs are added up before precision and recall are
    computed, so a long response weighs more than a short one. This is not the mean of
    ``chrf_scores``, which gives every response the same weight.
    """
    responses, references = list(responses), list(references)
    _check_same_length(responses, references, "responses", "references")
    # sacrebleu allows several references per response: one list per set of references.
    return CHRF().corpus_score(responses, [references]).score


# --- With a judge: a larger model served by Ollama on this machine ------------------------------


def ollama_models(host=OLLAMA_HOST, timeout=1.0) -> list[str]:
    """The names of the models an Ollama server offers, e.g. ``["llama3:latest"]``.

    Returns ``[]`` when no server answers at ``host`` (or its answer makes no sense), so that
    ``if ollama_models():`` is a safe test of whether a judge is available. Never raises.
    """
    try:
        with _open(f"{host}/api/tags", timeout=timeout) as answer:
            listing = json.load(answer)
        return [model["name"] for model in listing["models"] if isinstance(model["name"], str)]
    except REQUEST_ERRORS:
        return []


def pick_judge_model(models, preferred=("llama3", "llama3.1", "llama3.2", "phi3", "mistral")) -> str | None:
    """The model to use as the judge: the first of ``preferred`` that ``models`` has, else
    the first model there is, else None (no models at all).

    Ollama names a model ``family:tag`` (``"llama3:latest"``, ``"llama3:8b"``); only the part
    before the colon has to match.
    """
    models = list(models)
    for wanted in preferred:
        for model in models:
            if model.split(":")[0] == wanted:
                return model
    return models[0] if models else None


def judge_prompt(entry, response, format_input) -> str:
    """The question put to the judge about one response.

    ``entry``: a test entry with ``"instruction"``, ``"input"`` and ``"output"`` (the
    reference answer); ``response``: what the fine-tuned model answered; ``format_input``:
    the function that turns an entry into the prompt the model saw (you wrote it in this
    chapter), so the judge reads the instruction exactly as the model did.
    """
    return (
        "You are grading the answer of an assistant.\n\n"
        f"The task it was given:\n{format_input(entry)}\n\n"
        f"A correct answer to the task:\n{entry['output']}\n\n"
        f"The assistant's answer:\n{response}\n\n"
        "How good is the assistant's answer, compared with the correct one? "
        "Give a score from 0 (wrong or useless) to 100 (as good as the correct answer). "
        "Respond with the integer number only."
    )


def ask_ollama(prompt, model, host=OLLAMA_HOST, timeout=60.0) -> str:
    """Send one prompt to ``model`` on the Ollama server at ``host``; returns its answer.

    A fixed seed and temperature 0 make the answer repeatable: asking again gives the same
    score. Raises an OSError (urllib's URLError or HTTPError) when the request fails.
    """
    request = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "stream": False,  # the whole answer in one JSON object, not a stream of pieces
        "options": {"seed": 123, "temperature": 0, "num_ctx": 2048},
    }
    body = json.dumps(request).encode("utf-8")
    with _open(f"{host}/api/chat", data=body, timeout=timeout) as answer:
        return json.load(answer)["message"]["content"]


def parse_score(text) -> int | None:
    """The score in a judge's answer: its first number, if that is a whole number from 0 to
    100; None otherwise.

    Judges do not always answer with the number only: "Score: 85" and "85/100" both give 85.
    An answer whose first number is out of range ("150") or not whole ("7.5") gives None
    rather than a guess.
    """
    first = re.search(r"-?\d+(\.\d+)?", text)
    if first is None or first.group(1) is not None:
        return None
    score = int(first.group(0))
    return score if 0 <= score <= 100 else None


def judge_responses(entries, responses, format_input, model, host=OLLAMA_HOST, timeout=60.0) -> list[int | None]:
    """Ask the judge ``model`` to score every response; returns one score (0 to 100) per
    response.

    A response gets None when its request fails (the loop goes on with the next one) or the
    judge's answer holds no score; one line at the end says how many did and why.
    """
    entries, responses = list(entries), list(responses)
    _check_same_length(entries, responses, "entries", "responses")
    scores, failed, unreadable = [], [], 0
    for entry, response in progress_bar(list(zip(entries, responses)), desc="judging"):
        prompt = judge_prompt(entry, response, format_input)
        try:
            answer = ask_ollama(prompt, model, host=host, timeout=timeout)
        except REQUEST_ERRORS as error:
            failed.append(str(error))  # the text only: an HTTPError holds on to its connection
            scores.append(None)
            continue
        score = parse_score(answer)
        unreadable += score is None
        scores.append(score)
    if failed or unreadable:
        say(_missing_scores_note(len(scores), failed, unreadable))
    return scores


# --- Reading the scores -----------------------------------------------------------------------


def describe_scores(scores) -> str:
    """A one-line summary, e.g. ``"mean 23.4, median 21.0, from 3.2 to 71.5 over 55
    responses"``. None values (responses without a score) are left out, and counted."""
    scores = list(scores)
    known = [score for score in scores if score is not None]
    missing = len(scores) - len(known)
    missing_note = f" ({missing} without a score)" if missing else ""
    if not known:
        return f"no scores{missing_note}"
    return (f"mean {statistics.mean(known):.1f}, median {statistics.median(known):.1f}, "
            f"from {min(known):.1f} to {max(known):.1f} over {_plural(len(known), 'response')}{missing_note}")


def best_and_worst(entries, responses, scores, k=3) -> pd.DataFrame:
    """The ``k`` best and the ``k`` worst responses by score, as a table to look at.

    Columns: ``rank`` ("best 1" is the highest score, "worst 1" the lowest), ``score``,
    ``instruction`` (with the entry's input, if it has one), ``reference`` and ``response``.
    Long texts are shortened to fit a notebook. Responses scored None are left out; equal
    scores keep the order of the data. With fewer than ``2 * k`` scored responses, each
    appears once: the upper half as the best, the lower half as the worst.
    """
    entries, responses, scores = list(entries), list(responses), list(scores)
    _check_same_length(entries, responses, "entries", "responses")
    _check_same_length(entries, scores, "entries", "scores")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}.")
    scored = [i for i, score in enumerate(scores) if score is not None]
    num_worst = min(k, len(scored) // 2)
    num_best = min(k, len(scored) - num_worst)
    # sorted() is stable: entries with equal scores stay in the order of the data.
    best = sorted(scored, key=lambda i: -scores[i])[:num_best]
    rest = [i for i in scored if i not in best]
    worst = sorted(rest, key=lambda i: scores[i])[:num_worst]
    ranks = [f"best {n}" for n in range(1, num_best + 1)] + [f"worst {n}" for n in range(1, num_worst + 1)]
    rows = [
        {
            "rank": rank,
            "score": round(float(scores[i]), 1),
            "instruction": _shorten(_instruction_text(entries[i])),
            "reference": _shorten(entries[i]["output"]),
            "response": _shorten(responses[i]),
        }
        for rank, i in zip(ranks, best + worst)
    ]
    return pd.DataFrame(rows, columns=["rank", "score", "instruction", "reference", "response"])


# --- Helpers ----------------------------------------------------------------------------------


def _open(url, data=None, timeout=1.0):
    """urlopen without proxies: the judge runs on this machine, and a proxy set for the
    internet (http_proxy) would otherwise be asked for localhost too, and fail."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    headers = {"Content-Type": "application/json"} if data is not None else {}
    return opener.open(urllib.request.Request(url, data=data, headers=headers), timeout=timeout)


def _check_same_length(first, second, first_name, second_name):
    if len(first) != len(second):
        raise ValueError(f"one of each per example: got {len(first)} {first_name} and {len(second)} {second_name}.")


def _missing_scores_note(total, failed, unreadable):
    """'judging: 2 of 55 responses got no score (1 request failed: ..., 1 answer held no score).'"""
    reasons = []
    if failed:
        reasons.append(f"{_plural(len(failed), 'request')} failed, the first with: {failed[0]}")
    if unreadable:
        reasons.append(f"{_plural(unreadable, 'answer')} held no score from 0 to 100")
    missing = len(failed) + unreadable
    return f"judging: {missing} of {_plural(total, 'response')} got no score ({'; '.join(reasons)})."


def _instruction_text(entry):
    """The instruction, followed by the entry's input when it has one."""
    extra = entry.get("input", "")
    return f"{entry['instruction']} — {extra}" if extra else entry["instruction"]


def _shorten(text, limit=MAX_CELL_CHARS):
    """The text on one line (a table cell shows line breaks as \\n), cut to ``limit``
    characters with "…" at the end when it is longer."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _plural(count, noun):
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
