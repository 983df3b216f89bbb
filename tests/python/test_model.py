"""A checkpoint run from Python: the tiny GPT-2 of tests/models, as `attntrace export --model` runs it."""
import numpy as np
import pytest

import attntrace
from conftest import TINY_GPT2, attntrace_cli, read_npy_export


@pytest.mark.parametrize("given", [{"text": "the ring fell"}, {"ids": [5, 9, 2]}])
def test_a_model_run_is_the_clis(given, tmp_path):
    flags = ["--text", given["text"]] if "text" in given else ["--ids", ",".join(map(str, given["ids"]))]
    attntrace_cli("export", "--model", TINY_GPT2, *flags, "--npy", tmp_path / "npy")
    index, arrays = read_npy_export(tmp_path / "npy")
    run = attntrace.run(model=TINY_GPT2, **given)
    assert run.tokens == index["tokens"] and run.steps == [s["name"] for s in index["steps"]]
    for name, a in arrays.items():
        if a is not None:
            assert np.array_equal(run[name].view(np.uint32), a.view(np.uint32)), name
    top = run.next_tokens(3)["next_tokens"]
    assert len(top) == 3 and top[0]["probability"] >= top[1]["probability"]


def test_a_model_run_traces_the_blocks_asked_for():
    run = attntrace.run(model=str(TINY_GPT2), text="the ring fell", trace="hook_pattern", blocks=[1])
    assert "blocks.1.attn.hook_pattern" in run and "blocks.0.attn.hook_pattern" not in run
    with pytest.raises(KeyError):
        run["blocks.0.attn.hook_pattern"]
