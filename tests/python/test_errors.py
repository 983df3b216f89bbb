"""Bad input raises attntrace.InputError (a ValueError) with the CLI's fields; a wrong type, TypeError."""
import json

import pytest

import attntrace
from conftest import LESSONS, SOURCE_DIR, TINY_GPT2, attntrace_cli

RING_FELL = SOURCE_DIR / "lessons" / "003-3.1-ring-fell.json"


def ring_fell():
    return json.loads(RING_FELL.read_text())


def test_a_bad_field_names_its_path():
    lesson = ring_fell()
    lesson["config"]["heads"] = 3
    with pytest.raises(attntrace.InputError) as e:
        attntrace.run(lesson)
    assert isinstance(e.value, ValueError)
    assert e.value.path == "config.heads" and e.value.file == "lesson (a dict)"
    assert e.value.expected and e.value.found and str(e.value).startswith("lesson (a dict): config.heads: ")


def test_a_missing_field_says_so():
    lesson = ring_fell()
    del lesson["tokens"]
    with pytest.raises(attntrace.InputError) as e:
        attntrace.run(lesson)
    assert e.value.kind == "missing_field" and e.value.path == "tokens"


def test_a_missing_file_is_the_clis_line(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(attntrace.InputError) as e:
        attntrace.run(missing)
    cli = attntrace_cli("run", missing, check=False)
    assert cli.returncode == 2 and str(e.value) in cli.stderr
    assert e.value.file == str(missing)


@pytest.mark.parametrize(
    "kwargs, file",
    [
        ({"trace": "hook_patern"}, "trace"),
        ({"trace": ""}, "trace"),
        ({"arithmetic": "rounded"}, "arithmetic"),
        ({"threads": 0}, "threads"),
        ({"blocks": [7]}, "blocks"),
    ],
)
def test_a_bad_argument_names_itself(kwargs, file):
    with pytest.raises(attntrace.InputError) as e:
        attntrace.run(RING_FELL, **kwargs)
    assert e.value.file == file


def test_lesson_and_model_together_or_neither():
    with pytest.raises(attntrace.InputError):
        attntrace.run()
    with pytest.raises(attntrace.InputError):
        attntrace.run(RING_FELL, model=TINY_GPT2, text="the")
    with pytest.raises(attntrace.InputError) as e:
        attntrace.run(model=TINY_GPT2)
    assert e.value.file == "model"
    with pytest.raises(attntrace.InputError) as e:
        attntrace.run(RING_FELL, text="the ring")
    assert e.value.file == "text"
    for ids in ([10**9], [1, 2**70]):  # past the vocabulary; past 64 bits
        with pytest.raises(attntrace.InputError) as e:
            attntrace.run(model=TINY_GPT2, ids=ids)
        assert e.value.file == "ids" and e.value.path == f"[{len(ids) - 1}]"


@pytest.mark.parametrize(
    "call",
    [
        lambda: attntrace.run(3),
        lambda: attntrace.run(RING_FELL, trace=3),
        lambda: attntrace.run(model=TINY_GPT2, ids=["a"]),
        lambda: attntrace.run(model=TINY_GPT2, ids=[True]),
        lambda: attntrace.run(model=TINY_GPT2, ids="1,2"),
        lambda: attntrace.run(model=TINY_GPT2, text=b"the"),
        lambda: attntrace.run(RING_FELL, blocks=[0.5]),
        lambda: attntrace.cost(tokens="1K"),
        lambda: attntrace.draft(3),
        lambda: attntrace.draft(None),
        lambda: attntrace.run(RING_FELL).save(None),
        lambda: attntrace.run(RING_FELL).save_npy(3),
        lambda: attntrace.run(RING_FELL).report().save(None),
        lambda: attntrace.run(RING_FELL)[3],
    ],
)
def test_a_wrong_type_is_a_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_an_unknown_step_is_a_key_error():
    run = attntrace.run(RING_FELL)
    with pytest.raises(KeyError) as e:
        run["hook_patern"]
    assert "hook_pattern" in str(e.value)
    with pytest.raises(attntrace.InputError):
        run.explain("hook_pattern[h0, ring, nope]")


def test_a_summary_step_has_no_values():
    run = attntrace.run(RING_FELL, trace="summary")
    with pytest.raises(ValueError) as e:
        run["blocks.0.attn.hook_pattern"]
    assert "summary" in str(e.value)


def test_cost_is_the_clis():
    cli = json.loads(attntrace_cli("cost", "--tokens", "4096", "--heads", "32", "--kv-heads", "8", "--d-model", "4096",
                                   "--layers", "32", "--d-ff", "14336", "--activation", "swiglu", "--dtype", "bf16",
                                   "--json").stdout)
    py = attntrace.cost(tokens=4096, heads=32, kv_heads=8, d_model=4096, layers=32, d_ff=14336, activation="swiglu",
                        dtype="bf16")
    assert py == cli
    with pytest.raises(attntrace.InputError) as e:
        attntrace.cost(heads=5)
    assert e.value.file == "cost"
    with pytest.raises(attntrace.InputError) as e:
        attntrace.cost(tokens=0)
    assert e.value.file == "tokens"
    with pytest.raises(attntrace.InputError) as e:
        attntrace.cost(attention="window")
    assert e.value.file == "window"
    for name, value in (("activation", "tanh"), ("dtype", "fp8"), ("attention", "sliding")):
        with pytest.raises(attntrace.InputError) as e:
            attntrace.cost(**{name: value})
        assert e.value.file == name and e.value.found == f'"{value}"'


def test_draft_is_the_clis(tmp_path):
    article = SOURCE_DIR / "docs" / "examples" / "draft" / "tiny-attention.md"
    cli = json.loads(attntrace_cli("draft", article, "-o", "-").stdout)
    lesson = attntrace.draft(article)
    assert lesson == cli
    assert attntrace.run(lesson).claims
    with pytest.raises(attntrace.InputError) as e:
        attntrace.draft(article, example=99)
    assert e.value.file == "example"
    with pytest.raises(attntrace.InputError):
        attntrace.draft(tmp_path / "missing.md")
