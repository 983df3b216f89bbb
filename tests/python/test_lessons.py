"""Every lesson from Python holds the numbers the CLI exports, bit for bit, and writes the same files."""
import html

import numpy as np
import pytest

import attntrace
from conftest import LESSONS, attntrace_cli, read_npy_export


def same_bits(a, b):
    return a.dtype == b.dtype == np.float32 and a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_step_is_the_exports(lesson, tmp_path):
    attntrace_cli("export", lesson, "--npy", tmp_path / "npy", "-o", tmp_path / "cli.json")
    index, arrays = read_npy_export(tmp_path / "npy")
    run = attntrace.run(lesson)
    assert run.steps == [s["name"] for s in index["steps"]]
    assert run.tokens == index["tokens"]
    for s in index["steps"]:
        name = s["name"]
        assert run.axes(name) == s["axes"] and run.labels(name) == s["labels"], name
        assert run.source(name) == s["source"], name
        if arrays[name] is None:
            with pytest.raises(ValueError):
                run[name]
            continue
        assert same_bits(run[name], arrays[name]), name
        if s.get("formula_file"):
            assert same_bits(run.formula_values(name), np.load(tmp_path / "npy" / s["formula_file"])), name
    # The export JSON written from Python is the CLI's, byte for byte.
    run.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_document_arithmetic_is_the_exports(lesson, tmp_path):
    try:
        run = attntrace.run(lesson, arithmetic="document")
    except attntrace.InputError as e:
        assert e.file == str(lesson) and "document_rounding" in str(e)
        return
    attntrace_cli("export", lesson, "--arithmetic", "document", "--npy", tmp_path / "npy")
    _, arrays = read_npy_export(tmp_path / "npy")
    for name, a in arrays.items():
        if a is not None:
            assert same_bits(run[name], a), name


def test_save_npy_writes_the_clis_folder(tmp_path):
    lesson = LESSONS[0].parent / "003-3.1-ring-fell.json"
    attntrace_cli("export", lesson, "--npy", tmp_path / "cli")
    attntrace.run(lesson).save_npy(tmp_path / "py")
    cli = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert cli == sorted(p.name for p in (tmp_path / "py").iterdir())
    for name in cli:
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "py" / name).read_bytes(), name


def test_report_is_the_clis_page(tmp_path):
    lesson = LESSONS[0].parent / "003-3.3-multi-head.json"
    attntrace_cli("report", lesson, "-o", tmp_path / "cli.html")
    report = attntrace.run(lesson).report()
    assert report.html == (tmp_path / "cli.html").read_text()
    # Inline in a notebook: the same page, in an iframe of its own (an attribute: no quote left unescaped).
    framed = report._repr_html_()
    start, end = '<iframe srcdoc="', framed.index('" style=')
    assert framed.startswith(start) and '"' not in framed[len(start):end]
    assert html.unescape(framed[len(start):end]) == report.html


def test_claims_are_checks_verdicts():
    lesson = LESSONS[0].parent / "003-3.1-ring-fell.json"
    claims = attntrace.check(lesson)
    assert claims and all(c.as_expected for c in claims)
    export = attntrace.run(lesson).claims
    assert [(c.id, c.step, c.verdict) for c in claims] == [(c.id, c.step, c.verdict) for c in export]
    checked = [c for c in claims if c.computed is not None and c.printed is not None]
    assert checked
    for c in checked:  # the printed numbers beside the same cells computed, and their largest difference
        assert c.computed.shape == c.printed.shape
        deviation = np.max(np.abs(c.computed.astype(np.float64) - c.printed.astype(np.float64)))
        assert np.isclose(c.max_deviation, deviation, rtol=1e-6, atol=1e-7), c.id


def test_threads_do_not_change_a_number():
    lesson = LESSONS[0].parent / "003-stacked-blocks.json"
    one, two = attntrace.run(lesson, threads=1), attntrace.run(lesson, threads=2)
    for name in one.steps:
        try:
            a = one[name]
        except ValueError:
            continue
        assert same_bits(a, two[name]), name


@pytest.mark.parametrize("lesson", sorted((LESSONS[0].parent / "cost").glob("*.json")), ids=lambda p: p.stem)
def test_a_cost_lessons_check_is_the_clis(lesson):
    import json

    cli = json.loads(attntrace_cli("check", lesson, "--format", "json").stdout)["lessons"][0]
    py = attntrace.check(lesson)
    assert cli["as_expected"] and py.keys() == cli.keys() and len(py["claims"]) == len(cli["claims"])
    assert {k: v for k, v in py.items() if k != "claims"} == {k: v for k, v in cli.items() if k != "claims"}
    for a, b in zip(py["claims"], cli["claims"]):
        # The command's text holds a computed value to about 7 significant digits; Python has the whole double.
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == (pytest.approx(b[k], rel=1e-6) if isinstance(b[k], float) else b[k]), (a["id"], k)
