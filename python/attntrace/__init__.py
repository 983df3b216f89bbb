"""attntrace from Python: every number of a transformer's attention, computed and checked.

    import attntrace
    run = attntrace.run("lessons/003-3.1-ring-fell.json")
    run["blocks.0.attn.hook_pattern"]    # (NH, T, T): a read-only numpy view of the trace's own buffer
    run.explain("blocks.0.attn.hook_pattern[h0, ring, fell]")
    attntrace.run(model="tests/models/tiny-gpt2", text="the ring fell")

The functions are the library's, as the commands of the same name call it (docs/python.md).
"""
import os as _os

# The kernels' idle threads sleep between parallel regions, as the attntrace
# command makes them (src/cli/wait_policy.hpp): libgomp reads this once, when
# it is loaded with the extension below, and the user's own choice stands.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

from ._attntrace import Claim, Explanation, InputError, Report, Run, check, cost, draft, run  # noqa: E402

__all__ = ["Claim", "Explanation", "InputError", "Report", "Run", "check", "cost", "draft", "run"]
