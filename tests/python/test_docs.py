"""The Python examples of README.md and docs/python.md run as written, from the repository's root."""
import os
import re

import pytest

from conftest import SOURCE_DIR

DOCS = [SOURCE_DIR / "README.md", SOURCE_DIR / "docs" / "python.md"]


def python_blocks(path):
    return re.findall(r"^```python\n(.*?)^```$", path.read_text(), flags=re.S | re.M)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_python_examples_run(doc, tmp_path, monkeypatch):
    blocks = python_blocks(doc)
    assert blocks
    # The repository's folders the examples read, in a folder of their own for what they write.
    for sub in ("lessons", "docs", "tests"):
        os.symlink(SOURCE_DIR / sub, tmp_path / sub)
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, str(doc), "exec"), {})
