"""run[step] is a view of the trace's own buffer: no copy, read-only, alive as long as an array of it."""
import gc
import threading

import numpy as np
import pytest

import attntrace
from conftest import SOURCE_DIR, attntrace_cli

RING_FELL = SOURCE_DIR / "lessons" / "003-3.1-ring-fell.json"
PATTERN = "blocks.0.attn.hook_pattern"
DERIVED = "blocks.0.attn.hook_scores_scaled"  # under a plain softmax: computed when read (trace/derived.hpp)


def base_chain(a):
    while a is not None:
        yield a
        a = getattr(a, "base", None)


@pytest.mark.parametrize("step", [PATTERN, DERIVED])
def test_a_step_is_a_read_only_view_of_the_run(step):
    run = attntrace.run(RING_FELL)
    a, b = run[step], run[step]
    assert a.dtype == np.float32 and a.flags.c_contiguous and not a.flags.owndata
    assert any(x is run for x in base_chain(a))
    assert np.shares_memory(a, b)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0, 0] = 1.0
    with pytest.raises(ValueError):
        a.setflags(write=True)


def test_an_array_keeps_its_run_alive():
    run = attntrace.run(RING_FELL)
    a = run[PATTERN]
    expected = a.copy()
    del run
    gc.collect()
    attntrace.run(RING_FELL)  # memory that a freed trace would have left to the next run
    assert np.array_equal(a, expected)
    assert np.allclose(a.sum(axis=-1), 1, atol=1e-6)  # each row of weights sums to 1 (float32 rounding)


def test_the_steps_words_are_the_exports(tmp_path):
    import json

    attntrace_cli("export", RING_FELL, "-o", tmp_path / "t.json")
    exported = {s["name"]: s for s in json.loads((tmp_path / "t.json").read_text())["steps"]}
    run = attntrace.run(RING_FELL)
    for name in run.steps:
        assert run.formula(name) == exported[name]["formula"], name
        assert run.meaning(name) == exported[name]["explain"], name
        assert list(run.shape(name)) == exported[name]["shape"], name
    assert run.axes(PATTERN) == ["head", "query", "key"]
    assert run.labels(PATTERN)[1] == run.tokens == ["the", "ring", "fell"]
    assert "hook_pattern" in run and len(run) == len(run.steps) and list(run) == run.steps
    assert run["hook_pattern"] is not None  # the end of a name, when one step ends so


def test_explain_is_the_clis():
    run = attntrace.run(RING_FELL)
    cell = "blocks.0.attn.hook_pattern[h0, ring, fell]"
    e = run.explain(cell)
    cli = attntrace_cli("explain", RING_FELL, cell).stdout
    assert str(e) == e.text and e.text.rstrip("\n") == cli.rstrip("\n")
    assert e.traced == run[PATTERN][0, 1, 2]
    assert e.recomputed is not None and abs(e.recomputed - e.traced) < 1e-6


def test_the_interpreter_runs_while_cpp_computes(tmp_path):
    big = tmp_path / "big.json"
    attntrace_cli("random", "--tokens", "384", "--d-model", "64", "--heads", "4", "--out", big)
    done, ticks = threading.Event(), [0]

    def count():
        while not done.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        attntrace.run(big)
    finally:
        done.set()
        counter.join()
    # Held, the interpreter would let the counter run only between calls: a handful of ticks.
    assert ticks[0] > 1000
