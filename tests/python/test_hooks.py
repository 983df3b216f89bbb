"""hooks={name: fn}: TransformerLens' semantics, the same run a lesson's given makes."""
import json

import numpy as np
import pytest

import attntrace
from conftest import SOURCE_DIR, TINY_GPT2

RING_FELL = SOURCE_DIR / "lessons" / "003-3.1-ring-fell.json"
PATTERN, Z = "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z"


def ring_fell():
    return json.loads(RING_FELL.read_text())


def flat(values, name):
    values[:] = 1.0 / values.shape[-1]
    return values


def test_a_hook_that_changes_a_step_equals_the_lesson_giving_it():
    hooked = attntrace.run(RING_FELL, hooks={PATTERN: flat})
    lesson = ring_fell()
    pattern = attntrace.run(RING_FELL)[PATTERN]
    lesson.setdefault("given", {})[PATTERN] = np.full(pattern.shape, 1.0 / pattern.shape[-1]).tolist()
    given = attntrace.run(lesson)
    for step in hooked.steps:
        assert np.array_equal(hooked[step], given[step]), step
    assert hooked.source(PATTERN) == "given"
    assert not np.array_equal(hooked[Z], attntrace.run(RING_FELL)[Z])


def test_hooks_see_the_values_earlier_hooks_made_and_none_changes_nothing():
    seen = {}

    def look(values, name):
        seen[name] = values.copy()

    plain = attntrace.run(model=str(TINY_GPT2), text="the ring fell")
    run = attntrace.run(model=str(TINY_GPT2), text="the ring fell",
                        hooks={"blocks.1.attn.hook_z": look, "blocks.0.hook_mlp_out": lambda v, n: v * 0})
    # the later hook saw block 1 computed from the zeroed MLP output, not the plain run's
    assert not np.array_equal(seen["blocks.1.attn.hook_z"], plain["blocks.1.attn.hook_z"])
    assert np.array_equal(seen["blocks.1.attn.hook_z"], run["blocks.1.attn.hook_z"])
    assert not run["blocks.0.hook_mlp_out"].any()
    untouched = attntrace.run(model=str(TINY_GPT2), text="the ring fell", hooks={"unembed": lambda v, n: None})
    assert np.array_equal(untouched["unembed"], plain["unembed"])


def test_bad_hooks_raise():
    with pytest.raises(attntrace.InputError) as e:
        attntrace.run(RING_FELL, hooks={"blocks.0.attn.hook_patern": flat})
    assert e.value.path == "blocks.0.attn.hook_patern" and "hook_pattern" in str(e.value)
    with pytest.raises(TypeError):
        attntrace.run(RING_FELL, hooks={PATTERN: 3})
    with pytest.raises(TypeError):
        attntrace.run(RING_FELL, hooks=[PATTERN])
    with pytest.raises(attntrace.InputError):
        attntrace.run(RING_FELL, hooks={PATTERN: lambda v, n: np.zeros((2, 2))})
    with pytest.raises(TypeError):
        attntrace.run(RING_FELL, hooks={PATTERN: lambda v, n: "no"})
