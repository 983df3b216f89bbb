#!/usr/bin/env bash
# ctest -R consumer: what `cmake --install` gives another project, and an
# installed attntrace that finds its data without the source tree.
#   1. installs the build under test into a temporary prefix and checks the layout;
#   2. builds tests/consumer against it (find_package(attntrace)) and runs it;
#   3. with a Python interpreter given (the build has the module, python/): the
#      package installed where the install said, imported from the source
#      tree's root, runs a lesson;
#   4. moves the prefix elsewhere and runs the installed CLI from outside the
#      source tree, without ATTNTRACE_LESSONS / ATTNTRACE_GOLDEN: `list` must
#      name the moved share/attntrace/lessons, and `check` and `golden` must
#      pass on the installed lessons and goldens.
# Usage: run.sh BUILD_DIR CXX_COMPILER BUILD_TYPE [PYTHON]
set -euo pipefail
build=$1 cxx=$2 type=${3:-Release} python=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/attntrace-consumer-XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "consumer: $*" >&2; exit 1; }
# Runs a step quietly; on failure shows its output.
quiet() { "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "failed: $*"; }; }

# 1. cmake --install
prefix=$work/prefix
quiet cmake --install "$build" --prefix "$prefix"
site=$(sed -n 's/^-- attntrace: the Python package goes to //p' "$work/log")  # with the module only
for f in bin/attntrace lib/libattntrace_core.a lib/libattntrace_pipeline.a lib/libattntrace_render.a \
         include/attntrace/core/tensor.hpp include/attntrace/trace/trace.hpp include/attntrace/trace/xview.hpp include/attntrace/kernels/kernels.hpp \
         share/attntrace/lessons/003-3.1-ring-fell.json share/attntrace/golden/003-3.1-ring-fell.json \
         lib/cmake/attntrace/attntraceConfig.cmake lib/cmake/attntrace/attntraceConfigVersion.cmake \
         lib/cmake/attntrace/attntraceTargets.cmake; do
    [ -e "$prefix/$f" ] || fail "expected $prefix/$f after cmake --install, found nothing"
done
for d in include/attntrace/cli include/attntrace/kernels/simd; do
    [ ! -e "$prefix/$d" ] || fail "expected no $d (not part of the library's interface), found it installed"
done

# 2. a consumer project, configured and built against the prefix only
quiet cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE="$type"
quiet cmake --build "$work/build"
"$work/build/attntrace_consumer"

# 3. the Python package, where the install put it (under a prefix python3 does not read: named in PYTHONPATH)
if [ -n "$python" ]; then
    [ -n "$site" ] && [ -e "$site/attntrace/__init__.py" ] && ls "$site"/attntrace/_attntrace*.so >/dev/null ||
        fail "expected the Python package attntrace installed under $prefix, found \"$site\""
    case $site in "$prefix"/*) ;; *) fail "expected the Python package under $prefix, found it in $site" ;; esac
    (cd "$here/../.." && PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 "$python" -c "
import attntrace, numpy as np
run = attntrace.run('lessons/003-3.1-ring-fell.json')
assert attntrace.__file__.startswith('$site'), attntrace.__file__
assert run['blocks.0.attn.hook_pattern'].shape == (1, 3, 3) and all(c.as_expected for c in run.claims)
assert attntrace.run('002-cat-sat-down').file.startswith('$prefix/share/attntrace/lessons/')  # by id: the prefix's lessons
") >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "expected the installed Python package to run a lesson"; }
    echo "consumer: the installed Python package ($site) ran a lesson"
fi

# 4. the installed CLI, moved, from a folder outside the source tree
moved=$work/moved
mv "$prefix" "$moved"
mkdir "$work/elsewhere" && cd "$work/elsewhere"
unset ATTNTRACE_LESSONS ATTNTRACE_GOLDEN
"$moved/bin/attntrace" list >"$work/list.txt" || { cat "$work/list.txt"; fail "attntrace list failed"; }
grep -q "lessons in $moved/share/attntrace/lessons\$" "$work/list.txt" ||
    { tail -n 2 "$work/list.txt" >&2; fail "expected attntrace list to use $moved/share/attntrace/lessons"; }
quiet "$moved/bin/attntrace" check 003-3.1-ring-fell 002-cat-sat-down
quiet "$moved/bin/attntrace" golden
grep -q "^ok  *$moved/share/attntrace/golden/003-3.1-ring-fell.json\$" "$work/log" ||
    { cat "$work/log" >&2; fail "expected attntrace golden to compare with $moved/share/attntrace/golden"; }
echo "consumer: installed, consumer built and run, installed attntrace found its lessons and goldens in $moved/share/attntrace"
