"""The class challenge where people look: the class report's section, a line of each student's
feedback, and the leaderboard entry of Gradescope's results.json.

All of it reads OUT/leaderboard.json, which `python -m grader leaderboard` writes
(grader/outputs/leaderboard.py); nothing here runs an entry. The class report passes its own
drawing helpers in, so that this module does not import it.
"""
import html
import json
import os

LEADERBOARD_JSON = "leaderboard.json"  # grader/outputs/leaderboard.py's file
TOP = 10  # entries whose curves the report draws


def read_board(out_dir):
    """leaderboard.json of a folder as a dict; None when there is none (or it is not one)."""
    try:
        with open(os.path.join(out_dir, LEADERBOARD_JSON), encoding="utf-8") as f:
            board = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(board, dict) or not isinstance(board.get("entries"), list):
        return None
    board["entries"] = [row for row in board["entries"] if isinstance(row, dict) and isinstance(row.get("student"), str)]
    return board


def feedback_line(board, submission):
    """The student's line of the challenge, or None when the board has no entry of theirs."""
    if board is None:
        return None
    row = next((r for r in board["entries"] if r["student"] == submission), None)
    if row is None:
        return None
    scored = sum(1 for r in board["entries"] if r.get("status") == "ok")
    if row.get("status") != "ok":
        return f"**Class challenge:** your entry was not ranked: {row.get('detail')}."
    return (f"**Class challenge:** rank {row['rank']} of {scored}, private validation loss {row['private_loss']:.4f} "
            f"(public {row['public_loss']:.4f}), after {row['tokens']:,} training tokens with "
            f"{row['parameters']:,} parameters, in {row['seconds']:.0f} s of training.")


def gradescope_leaderboard(row):
    """Gradescope's `leaderboard` list for one scored entry (Gradescope shows each student's
    pseudonym beside it); None for an entry that was not scored."""
    if row is None or row.get("status") != "ok":
        return None
    return [{"name": "private loss", "value": row["private_loss"], "order": "asc"},
            {"name": "public loss", "value": row["public_loss"], "order": "asc"},
            {"name": "parameters", "value": row["parameters"], "order": "asc"}]


def section(out_dir, figure, png, img):
    """The class report's section (empty without a leaderboard): the table and, for the top ten,
    the private loss against the training tokens. figure(width, height), png(figure) and
    img(data, alt) are the class report's drawing helpers."""
    board = read_board(out_dir)
    if board is None:
        return ""
    rows = board["entries"]
    challenge = board.get("challenge") or {}
    head = ("<tr><th class=\"num\">rank</th><th>student</th><th class=\"num\">private loss</th>"
            "<th class=\"num\">public loss</th><th class=\"num\">tokens</th><th class=\"num\">parameters</th>"
            "<th class=\"num\">seconds</th><th>status</th></tr>")
    body = "".join(_row(row) for row in rows)
    about = (f"Every entry trained again in the grader's sandbox: {_number(challenge.get('budget_tokens'))} training "
             f"tokens, at most {_number(challenge.get('max_parameters'))} parameters and "
             f"{_number(challenge.get('time_limit_s'))} s; scored on the private text. Losses within "
             f"{board.get('tie_within')} share a rank.")
    plot = _curves(rows, figure, png, img)
    return (f"<h2 id=\"challenge\">Class challenge</h2><p>{html.escape(about)}</p>{plot}"
            f"<table>{head}{body}</table>")


def _row(row):
    def cell(value, digits=None):
        if value is None:
            return "<td class=\"num\"></td>"
        text = f"{value:.{digits}f}" if digits is not None else _number(value)
        return f"<td class=\"num\">{html.escape(text)}</td>"

    status = "ok" if row.get("status") == "ok" else f"{row.get('status')}: {row.get('detail')}"
    return (f"<tr>{cell(row.get('rank'))}<td>{html.escape(row['student'])}</td>{cell(row.get('private_loss'), 4)}"
            f"{cell(row.get('public_loss'), 4)}{cell(row.get('tokens'))}{cell(row.get('parameters'))}"
            f"{cell(row.get('seconds'), 0)}<td>{html.escape(str(status))}</td></tr>")


def _number(value):
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, (int, float)) else str(value)


def _curves(rows, figure, png, img):
    top = [r for r in rows if r.get("status") == "ok" and r.get("curve")][:TOP]
    if not top:
        return ""
    fig = figure(7.5, 3.6, right=2.4)
    ax = fig.add_subplot()
    for row in top:
        tokens, losses = zip(*row["curve"])
        ax.plot(tokens, losses, marker="o", markersize=3, label=f"{row['rank']}. {row['student']}"[:28])
    ax.set_xlabel("training tokens handed out")
    ax.set_ylabel("private validation loss")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)
    return img(png(fig), "private validation loss against training tokens, top ten entries")
