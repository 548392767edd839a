"""Talk to your own model in the notebook: a chat panel on ipywidgets.

    from gptcourse.chat import chat_panel
    chat_panel({"my model": model}, tokenizer, generate, context_size=256)

The panel lives in the notebook: its buttons and sliders are ipywidgets, which travel over the
kernel's own connection (the one the hub already proxies), so there is no second server, no
port, and nothing is sent anywhere. It works the same in JupyterLab and on the course hub; Colab
renders ipywidgets too (not tested by the course: there is no Colab here).

What it shows:
- the answer streamed token by token, as your own `generate` (Task 6.4) adds them: each token
  is one call of it with `max_new_tokens=1`, so what you see is what your function does;
  with `cached=True` the model it calls keeps a key-value cache (Task 6.5): the same tokens,
  faster, with the speed shown;
- sliders for the temperature, top-k, top-p and the number of new tokens, and a seed: the
  settings an answer used are written under it, and the same seed and settings give the same
  answer again;
- "why this token": for the last token, the most probable candidates before and after your
  filters (top-k, then top-p, then the temperature, as your `generate` applies them);
- several models side by side, each with its own settings, answering the same prompt;
- a transcript to save as markdown.

`Conversation` is the panel without widgets: what the tests and the masters run.
"""
import dataclasses
import threading
import time

import torch

from .notebook import unfinished_task_message

END_OF_TEXT = 50256  # GPT-2's <|endoftext|>: an answer ends there
CANDIDATES = 8  # how many tokens "why this token" shows; the rest are summed as "others"


@dataclasses.dataclass
class Settings:
    """How one answer is drawn: 0 for the temperature is greedy decoding; None turns a filter off."""
    temperature: float = 0.8
    top_k: int = 40
    top_p: float = 0.95
    max_new_tokens: int = 40
    seed: int = 123

    def describe(self):
        return (f"temperature {self.temperature:g}, top-k {self.top_k or 'off'}, top-p {self.top_p or 'off'}, "
                f"{self.max_new_tokens} new tokens at most, seed {self.seed}")


@dataclasses.dataclass
class Answer:
    """One answer: its prompt, its tokens as they came, the settings it used, how fast."""
    model: str
    prompt: str
    settings: Settings
    pieces: list = dataclasses.field(default_factory=list)  # the text of each new token
    token_ids: list = dataclasses.field(default_factory=list)
    stopped: bool = False  # ended by Stop
    seconds_to_first_token: float = None
    tokens_per_second: float = None
    problem: str = ""  # one line, when the answer could not be made

    @property
    def text(self):
        return "".join(self.pieces)

    def markdown(self):
        said = self.problem or self.text + (" [stopped]" if self.stopped else "")
        return f"**{self.model}** ({self.settings.describe()})\n\n> {self.prompt}\n\n{said}\n"


class CachedForGenerate(torch.nn.Module):
    """A model with a key-value cache, as `generate` calls a model: given the whole sequence so
    far, it feeds the cache only the tokens it has not seen and returns their logits (the last
    position's is what `generate` reads). The cache cannot crop, so an answer stops at the
    model's context length."""

    def __init__(self, cached_model):
        super().__init__()
        self.cached = cached_model
        self.seen = 0

    def reset(self):
        self.cached.reset_cache()
        self.seen = 0

    def forward(self, idx):
        new = idx[:, self.seen:]
        self.seen = idx.shape[1]
        return self.cached(new)


class Conversation:
    """The chat without widgets: a model, the student's functions, and answers streamed token by
    token. `functions` holds the student's `generate` and, for "why this token", their
    `softmax_with_temperature`, `top_k_logits` and `top_p_logits` (those missing are skipped)."""

    def __init__(self, name, model, tokenizer, functions, context_size, device=None, cached_model=None,
                 prompt_template=None):
        self.name = name
        # What the model is given for a prompt: the prompt itself, or the prompt in the format a
        # model was fine-tuned on (chapter 09's instruction and response headers).
        self.prompt_template = prompt_template or (lambda prompt: prompt)
        self.model = model
        self.tokenizer = tokenizer
        self.functions = functions
        self.context_size = context_size
        self.device = device or next(model.parameters()).device
        self.cached = CachedForGenerate(cached_model) if cached_model is not None else None

    def answer(self, prompt, settings, stop=lambda: False, on_token=lambda answer: None):
        """Stream an answer: `on_token(answer)` after every token; `stop()` is asked before each."""
        answer = Answer(self.name, prompt, dataclasses.replace(settings))
        try:
            self._stream(answer, stop, on_token)
        except NotImplementedError as error:
            answer.problem = unfinished_task_message(error) or f"Not implemented yet: {error}"
        return answer

    def _stream(self, answer, stop, on_token):
        settings = answer.settings
        generate = self.functions["generate"]
        model = self.cached if self.cached is not None else self.model
        if self.cached is not None:
            self.cached.reset()
        idx = torch.tensor([self._encoded(answer.prompt)], device=self.device)
        room = self.context_size - idx.shape[1] if self.cached is not None else settings.max_new_tokens
        torch.manual_seed(settings.seed)  # the draws of this answer, and only these, follow the seed
        started = time.perf_counter()
        self.model.eval()
        for _ in range(min(settings.max_new_tokens, room)):
            if stop():
                answer.stopped = True
                break
            idx = generate(model, idx, max_new_tokens=1, context_size=self.context_size,
                           temperature=settings.temperature, top_k=settings.top_k or None,
                           top_p=settings.top_p or None)
            token = int(idx[0, -1])
            if answer.seconds_to_first_token is None:
                answer.seconds_to_first_token = time.perf_counter() - started
            if token == END_OF_TEXT:
                break
            answer.token_ids.append(token)
            answer.pieces.append(self.tokenizer.decode([token]))
            on_token(answer)
        elapsed = time.perf_counter() - started
        answer.tokens_per_second = len(answer.token_ids) / elapsed if answer.token_ids and elapsed > 0 else None

    def _encoded(self, prompt):
        return self.tokenizer.encode(self.prompt_template(prompt), allowed_special={"<|endoftext|>"})

    def why(self, answer, position=-1):
        """The candidates for a token of `answer` (the last by default): [(piece, probability before
        the filters, after them)], the `CANDIDATES` most probable first, then ("others", ...)."""
        prompt_ids = self._encoded(answer.prompt)
        ids = prompt_ids + answer.token_ids
        end = len(ids) + position if position < 0 else len(prompt_ids) + position
        context = torch.tensor([ids[max(0, end - self.context_size):end]], device=self.device)
        with torch.no_grad():
            logits = self.model.eval()(context)[0, -1].float().cpu()
        before = torch.softmax(logits, dim=-1)
        after = self._filtered(logits, answer.settings)
        top = torch.argsort(before, descending=True)[:CANDIDATES].tolist()
        rows = [(self.tokenizer.decode([i]), float(before[i]), float(after[i])) for i in top]
        rows.append(("others", 1.0 - sum(r[1] for r in rows), 1.0 - sum(r[2] for r in rows)))
        return rows

    def _filtered(self, logits, settings):
        """The probabilities the student's generate draws from: their top-k, then their top-p, then
        their temperature; greedy decoding puts everything on the largest logit."""
        if settings.temperature == 0:
            return torch.nn.functional.one_hot(torch.argmax(logits), logits.shape[-1]).float()
        steps = [("top_k_logits", settings.top_k), ("top_p_logits", settings.top_p)]
        for name, value in steps:
            if value and name in self.functions:
                logits = self.functions[name](logits, value)
        if "softmax_with_temperature" in self.functions:
            return self.functions["softmax_with_temperature"](logits, settings.temperature).float()
        return torch.softmax(logits / settings.temperature, dim=-1)


def why_table(rows):
    """The candidates as lines of text: the token, its probability before the filters and after."""
    lines = [f"{'candidate':<14} {'model':>8} {'after filters':>14}"]
    for piece, before, after in rows:
        shown = "others" if piece == "others" else repr(piece)
        lines.append(f"{shown[:14]:<14} {before:>8.1%} {after:>14.1%}")
    return "\n".join(lines)


def transcript(answers):
    """The answers as markdown, in the order they were given."""
    return "# Chat transcript\n\n" + "\n---\n\n".join(answer.markdown() for answer in answers)


# ------------------------------------------------------------------------------------------
# The panel

def chat_panel(models, tokenizer, generate=None, context_size=None, device=None, functions=None,
               cached_models=None, settings=None, prompt_template=None):
    """Display a chat panel for `models` ({name: model}, or one model) and return it.

    `generate` and the filters default to the notebook's own (`generate`, `softmax_with_temperature`,
    `top_k_logits`, `top_p_logits`, as its task cells define them). `cached_models`: {name: a model
    with a key-value cache} to stream through instead (Task 6.5). `prompt_template`: what a model
    is given for a prompt (chapter 09: the prompt as an instruction, then the response header)."""
    import inspect

    namespace = inspect.currentframe().f_back.f_globals
    found = {name: namespace[name] for name in ("generate", "softmax_with_temperature", "top_k_logits",
                                                 "top_p_logits") if name in namespace}
    functions = {**found, **(functions or {})}
    if generate is not None:
        functions["generate"] = generate
    panel = ChatPanel(models, tokenizer, functions, context_size, device, cached_models, settings, prompt_template)
    panel.show()
    return panel


class ChatPanel:
    """The widgets: a prompt box (Enter sends), Stop and Clear, and a column per model with its
    sliders, its answer growing token by token, the settings it used and "why this token"."""

    def __init__(self, models, tokenizer, functions, context_size=None, device=None, cached_models=None,
                 settings=None, prompt_template=None):
        import ipywidgets as widgets

        self.widgets = widgets
        if isinstance(models, torch.nn.Module):
            models = {"your model": models}
        self.answers = []
        self._stop = threading.Event()
        self._thread = None
        self.conversations = []
        self.columns = []
        for name, model in models.items():
            size = context_size or model.pos_emb.weight.shape[0]
            cached = (cached_models or {}).get(name)
            self.conversations.append(Conversation(name, model, tokenizer, functions, size, device, cached,
                                                   prompt_template))
            self.columns.append(_Column(widgets, name, settings or Settings()))
        self.prompt = widgets.Text(placeholder="Type a prompt and press Enter", layout=widgets.Layout(width="100%"))
        self.prompt.continuous_update = False
        self.prompt.observe(lambda change: self.ask(change["new"]) if change["new"] else None, names="value")
        stop, clear, save = (widgets.Button(description=text) for text in ("Stop", "Clear", "Save transcript"))
        stop.on_click(lambda _: self._stop.set())
        clear.on_click(lambda _: self.clear())
        save.on_click(lambda _: self.save())
        self.status = widgets.Label()
        self.box = widgets.VBox([self.prompt, widgets.HBox([stop, clear, save, self.status]),
                                 widgets.HBox([column.box for column in self.columns])])

    def show(self):
        from IPython.display import display

        display(self.box)

    def ask(self, prompt, wait=False):
        """Send `prompt` to every model, each answer streamed in its column (in a thread, so that
        Stop can be pressed while it runs); `wait=True` returns once all answers are there (in
        `self.answers`)."""
        if self._thread is not None and self._thread.is_alive():
            self.status.value = "An answer is still coming: press Stop first."
            return None
        self._stop.clear()
        self.status.value = ""
        self._thread = threading.Thread(target=self._answer_all, args=(prompt,), daemon=True)
        self._thread.start()
        if wait:
            self._thread.join()

    def _answer_all(self, prompt):
        for conversation, column in zip(self.conversations, self.columns):
            column.start(prompt)
            answer = conversation.answer(prompt, column.settings(), stop=self._stop.is_set, on_token=column.show)
            column.finish(answer, conversation)
            self.answers.append(answer)

    def stop(self):
        self._stop.set()

    def clear(self):
        for column in self.columns:
            column.clear()
        self.answers = []
        self.prompt.value = ""

    def save(self, path="chat_transcript.md"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(transcript(self.answers))
        self.status.value = f"saved to {path}"
        return path


class _Column:
    """One model's side of the panel."""

    def __init__(self, widgets, name, settings):
        self.widgets = widgets
        self.temperature = widgets.FloatSlider(value=settings.temperature, min=0, max=2, step=0.05,
                                               description="temperature")
        self.top_k = widgets.IntSlider(value=settings.top_k or 0, min=0, max=200, description="top-k (0: off)")
        self.top_p = widgets.FloatSlider(value=settings.top_p or 0, min=0, max=1, step=0.01,
                                         description="top-p (0: off)")
        self.max_new_tokens = widgets.IntSlider(value=settings.max_new_tokens, min=1, max=200,
                                                description="new tokens")
        self.seed = widgets.IntText(value=settings.seed, description="seed")
        self.answer = widgets.Textarea(layout=widgets.Layout(width="100%", height="10em"), disabled=True)
        self.used = widgets.Label()
        self.why_button = widgets.Button(description="why this token")
        self.why_button.on_click(lambda _: self.explain())
        self.why_output = widgets.Output()
        self._last = None
        self.box = widgets.VBox([widgets.HTML(f"<b>{name}</b>"), self.temperature, self.top_k, self.top_p,
                                 self.max_new_tokens, self.seed, self.answer, self.used, self.why_button,
                                 self.why_output], layout=widgets.Layout(flex="1"))

    def settings(self):
        return Settings(temperature=self.temperature.value, top_k=self.top_k.value or None,
                        top_p=self.top_p.value or None, max_new_tokens=self.max_new_tokens.value,
                        seed=self.seed.value)

    def start(self, prompt):
        self.answer.value = prompt
        self.used.value = ""
        self.why_output.clear_output()

    def show(self, answer):
        self.answer.value = answer.prompt + answer.text

    def finish(self, answer, conversation):
        self._last = (answer, conversation)
        if answer.problem:
            self.answer.value = answer.problem
            return
        speed = f"; {answer.tokens_per_second:.1f} tokens/s" if answer.tokens_per_second else ""
        first = (f", first token after {answer.seconds_to_first_token:.2f} s"
                 if answer.seconds_to_first_token is not None else "")
        self.used.value = f"{answer.settings.describe()}{first}{speed}" + (" (stopped)" if answer.stopped else "")

    def explain(self):
        if self._last is None or not self._last[0].token_ids:
            return
        answer, conversation = self._last
        rows = conversation.why(answer)
        self.why_output.clear_output()
        with self.why_output:
            from .plots.sampling import plot_why_this_token
            import matplotlib.pyplot as plt

            print(why_table(rows))
            plot_why_this_token(rows, title=f"why {answer.pieces[-1]!r}")
            plt.show()

    def clear(self):
        self.answer.value = ""
        self.used.value = ""
        self.why_output.clear_output()
        self._last = None
