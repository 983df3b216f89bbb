#!/usr/bin/env bash
# Layers of src/, lowest first: a file may include its own layer and the
# layers below it, never one above it, nor another layer of the same rank.
# This is the order the library's CMake targets will link in (ARCHITECTURE.md);
# until they are split, this script is what catches an upward include.
#
#   rank layer      paths (a folder, or a file stem: the longest match wins)
LAYERS='
0 core          src/core/
1 kernels       src/kernels/
1 io            src/io/
2 model         src/trace/steps. src/trace/catalogue.
3 trace         src/trace/
4 lesson        src/lesson/
5 pipeline      src/pipeline/ src/batch/ src/decode/
6 analysis      src/check/ src/cost/ src/compare/ src/bench/
7 evaluate      src/evaluate/
8 views         src/render/ src/export/
9 cli           src/cli/
'
# Besides: xtensor only in the header-only view trace/xview.hpp (no library
# file includes it), xsimd only in kernels/.
#
# Usage: scripts/check-layers.sh [-q]   (-q: violations only, no per-folder list)
# Exit 0 when every include points down (or within its layer), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=${1:-}

declare -A rank_of layer_of_prefix
prefixes=()
while read -r rank layer paths; do
    [ -n "${rank:-}" ] || continue
    rank_of[$layer]=$rank
    for p in $paths; do
        layer_of_prefix[$p]=$layer
        prefixes+=("$p")
    done
done <<<"$LAYERS"

# The layer of a path under src/ (the longest matching prefix), or "".
layer_of() {
    local path=$1 best="" len=0 p
    for p in "${prefixes[@]}"; do
        if [[ $path == "$p"* ]] && ((${#p} > len)); then
            best=${layer_of_prefix[$p]}
            len=${#p}
        fi
    done
    printf '%s' "$best"
}

files=$(find src -name '*.cpp' -o -name '*.hpp' | LC_ALL=C sort)
bad=0
declare -A edges  # "from-layer -> to-layer" -> count

for f in $files; do
    from=$(layer_of "$f")
    if [ -z "$from" ]; then
        echo "check-layers: $f: in no layer (add its folder to LAYERS)" >&2
        bad=1
        continue
    fi
    while IFS=: read -r line inc; do
        [ -n "$inc" ] || continue
        target=src/$inc
        to=$(layer_of "$target")
        [ -n "$to" ] || continue  # a generated file or a path outside src/
        edges["$from -> $to"]=$(( ${edges["$from -> $to"]:-0} + 1 ))
        if [ "$from" != "$to" ] && (( ${rank_of[$to]} >= ${rank_of[$from]} )); then
            kind=upward
            (( ${rank_of[$to]} == ${rank_of[$from]} )) && kind=sideways
            echo "$f:$line: includes \"$inc\": $kind, from $from (${rank_of[$from]}) to $to (${rank_of[$to]})"
            bad=1
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/' || true)
    while IFS=: read -r line lib; do
        [ -n "$lib" ] || continue
        if [ "$lib" = xtensor ] && [ "$f" != src/trace/xview.hpp ]; then
            echo "$f:$line: includes xtensor: only src/trace/xview.hpp may (the library does not need it)"
            bad=1
        fi
        if [ "$lib" = xsimd ] && [ "$from" != kernels ]; then
            echo "$f:$line: includes xsimd outside kernels/"
            bad=1
        fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(xtensor|xsimd)/' "$f" |
             sed -E 's/^([0-9]+):[^<]*<(xtensor|xsimd)\/.*/\1:\2/' || true)
done

if [ "$quiet" != -q ]; then
    echo
    echo "includes between layers (count), by layer:"
    while read -r rank layer paths; do
        [ -n "${rank:-}" ] || continue
        line=""
        for key in "${!edges[@]}"; do
            [[ $key == "$layer -> "* ]] || continue
            to=${key#"$layer -> "}
            [ "$to" = "$layer" ] && continue
            line+=" $to(${edges[$key]})"
        done
        printf '  %-9s %-44s ->%s\n' "$layer" "$paths" "${line:- nothing}"
    done <<<"$LAYERS"
fi
if [ "$bad" != 0 ]; then
    echo "check-layers: includes above point up or sideways (layer order at the top of $0)" >&2
    exit 1
fi
echo "check-layers: every include points to its own layer or one below"
