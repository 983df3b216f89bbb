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

# A lesson named by its id (attntrace.run("003-3.1-ring-fell")) is looked for as
# the installed command looks beside itself (src/io/data_dir.hpp): an installed
# package (P/lib/python3.X/site-packages/attntrace) reads P/share/attntrace/lessons,
# unless ATTNTRACE_LESSONS says otherwise. In a build tree there is none: the
# source tree's lessons/ are read, as the command built there reads them.
if not _os.environ.get("ATTNTRACE_LESSONS"):
    _here = _os.path.dirname(_os.path.realpath(__file__))
    for _up in range(1, 5):
        _here = _os.path.dirname(_here)
        _lessons = _os.path.join(_here, "share", "attntrace", "lessons")
        if _os.path.isdir(_lessons):
            _os.environ["ATTNTRACE_LESSONS"] = _lessons
            break

from ._attntrace import Claim, Explanation, InputError, Report, Run, check, cost, draft, run  # noqa: E402

__all__ = ["Claim", "Explanation", "InputError", "Report", "Run", "check", "cost", "draft", "run"]
