"""Building blocks for the grader's chapter modules (grader/chapters/chNN_*.py): seeded random
generators, labels, module weights, known mistakes made from the reference (a subclass, or a
function's text with one piece changed). Nothing here knows a task."""
import inspect
import textwrap

import numpy as np

from grader.reference import reference_object

PUBLIC_SEED = 20240917


def _task_number(task_id):
    return int(str(task_id).replace(".", ""))


def public_rng(task_id):
    """The generator of a task's public cases: fixed, since their outputs ship as fixtures."""
    return np.random.default_rng(PUBLIC_SEED + _task_number(task_id))


def hidden_rng(task_id, seed):
    """The generator of a task's hidden cases, from the seed chosen at grading time."""
    return np.random.default_rng([int(seed), _task_number(task_id)])


def shape_label(shape, dtype, **settings):
    """'a batch of 2 x 6 tokens x 3 features, d_in=3, float32' for feedback."""
    if len(shape) == 3:
        text = f"a batch of {shape[0]} x {shape[1]} tokens x {shape[2]} features"
    elif len(shape) == 2:
        text = f"{shape[0]} tokens x {shape[1]} features"
    else:
        text = f"shape {tuple(shape)}"
    extra = ", ".join(f"{k}={v}" for k, v in settings.items())
    return f"{text}{', ' + extra if extra else ''}, {dtype}"


def module_arrays(module, rng, x_shape, out_shape, overrides=None):
    """Input x, weights for every parameter of `module` (state/<name>), a gradient seed.

    Weights are copied into the student's module by name, so a correct module whatever
    its initialisation gives the reference's numbers.
    """
    arrays = {"x": rng.normal(size=x_shape)}
    arrays.update(module_weights(module, rng))
    arrays.update(overrides or {})
    arrays["grad_seed"] = rng.normal(size=out_shape)
    return arrays


def module_weights(module, rng, prefix=""):
    """state/<prefix><name> for every parameter of `module`: random weights, small biases."""
    return {f"state/{prefix}{name}": rng.normal(scale=0.1 if name.endswith("bias") else 0.6, size=tuple(param.shape))
            for name, param in module.named_parameters()}


def reference_module(task_id, construct, args):
    """The task's reference class built with the case's constructor arguments."""
    positional, keywords = construct(args)
    return reference_object(task_id)(*positional, **keywords)


def add_x_future(arrays, args, rng, draw=None):
    """x_future: the same tokens up to position causal_t, new ones after it (causality check).
    draw(shape) makes the new ones (default: normal values; token ids need integers)."""
    x = arrays["x"]
    t = max(0, x.shape[1] // 2 - 1)
    future = x.copy()
    future[:, t + 1:] = (draw or (lambda size: rng.normal(size=size)))(future[:, t + 1:].shape)
    arrays["x_future"] = future
    args["causal_t"] = t


def subclass_with(task_id, **methods):
    """The reference class of a task with some methods replaced: a known mistake."""
    base = reference_object(task_id)
    return type(base.__name__, (base,), methods)


def subclass_with_forward(task_id, forward):
    """The reference class of a task with one thing changed in forward: a known mistake."""
    return subclass_with(task_id, forward=forward)


def reference_with_text_replaced(task_id, name, replacements):
    """The reference function `name` of a task, compiled again from its own source with pieces of
    text replaced ({old: new}, each old piece found exactly once): a known mistake that is the
    reference with a line changed, so that a long function (a training loop) is written once,
    in the master, and not copied here. It runs in the reference module's namespace.

    A master whose function no longer holds a piece fails here, naming it: the known mistake
    must then be written again against the new text."""
    reference = reference_object(task_id, name)
    source = textwrap.dedent(inspect.getsource(reference))
    for old, new in replacements.items():
        found = source.count(old)
        if found != 1:
            raise ValueError(f"the reference {name} of task {task_id} holds {old!r} {found} times, not once: "
                             f"its master changed; write this known mistake against the new text")
        source = source.replace(old, new)
    namespace = dict(reference.__globals__)
    changed = ", ".join(f"{old!r} -> {new!r}" for old, new in replacements.items())
    exec(compile(source, f"<the reference {name} with {changed}>", "exec"), namespace)
    return namespace[name]


def chunk_edges(rng, total, first=None):
    """Split 0..total into chunks of 1 to 3 tokens, [start, end] each (the first of size `first`
    when given): how a sequence is fed to a module that keeps a cache."""
    edges, start = [], 0
    while start < total:
        size = first if (first and start == 0) else int(rng.integers(1, 4))
        end = min(total, start + size)
        edges.append([start, end])
        start = end
    return edges


def chunk_sizes(chunks):
    """A case label's words for the chunks: "chunks of 1, 2, 1", or "6 chunks of 1" when they are
    all the same size."""
    sizes = [end - start for start, end in chunks]
    if len(set(sizes)) == 1 and len(sizes) > 2:
        return f"{len(sizes)} chunks of {sizes[0]}"
    return "chunks of " + ", ".join(map(str, sizes))
