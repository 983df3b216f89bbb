#!/usr/bin/env bash
# The HTML report in a real browser (ctest -R report_chromium):
#   run_report_test.sh ATTNTRACE LESSONS_DIR OUT_DIR
# For every lesson: `attntrace report`, then headless Chromium loads the page
# and dumps the DOM its script built. Fails unless every step of the lesson's
# trace has its <section data-step=NAME>, every claim its row with its
# verdict, the script finished (body data-rendered="ok") with no error
# recorded (body data-errors), and Chromium's log shows no console message
# (the page logs nothing; an uncaught error or a refused fetch would show).
# Then a model's page (report --model: its next-token table, as run computes
# it), and screenshots at 500 and 1400 px in OUT_DIR (the HTML stays there too).
set -uo pipefail

attntrace=$1 lessons=$2 out=$3
# Pages photographed at 1280 px (two heads, a causal mask); the flagship lesson's, a 64-token
# causal lesson's and a model's at 500 and 1400 px, with other generated pages (the end).
screenshot_lessons=(003-3.3-multi-head 004-causal-mask-example)
min_png_bytes=20000  # a blank 1280x2000 page compresses to ~10 KB; a drawn one is ~150 KB or more

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "FAIL: chromium is not installed; this test opens the HTML report in it." >&2
  echo "      Install it: bash scripts/install-deps.sh (or apt-get install --no-install-recommends chromium)" >&2
  exit 1
fi

rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
# A throwaway profile and home: the real ones are never touched.
export HOME="$work/home"
mkdir -p "$HOME"
browse() {
  timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
    --enable-logging=stderr --v=0 "$@"
}

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

for lesson in "$lessons"/*.json; do
  id=$(basename "$lesson" .json)
  html="$out/$id.html" trace="$work/$id.json" dom="$work/$id.dom" log="$work/$id.log"
  if ! "$attntrace" report "$lesson" -o "$html" || ! "$attntrace" export "$lesson" -o "$trace"; then
    fail "$id: attntrace report or export failed"; continue
  fi
  if ! browse --dump-dom "file://$html" >"$dom" 2>"$log"; then
    fail "$id: chromium failed or timed out:"; tail -5 "$log" >&2; continue
  fi
  body=$(tr '\n' ' ' <"$dom" | grep -o '<body[^>]*>' | head -1)  # an error text may hold newlines
  [[ $body == *'data-rendered="ok"'* ]] || fail "$id: the script did not finish: $body"
  [[ $body != *data-errors* ]] || fail "$id: errors recorded by the page: $body"
  if grep -E ':CONSOLE[:(]|Uncaught' "$log" >&2; then fail "$id: console messages (above)"; fi

  # Steps: each "name" key of the export is a step (one per "recorded").
  mapfile -t steps < <(grep -o '"name": "[^"]*"' "$trace" | sed 's/^"name": "//; s/"$//')
  [ "${#steps[@]}" -gt 0 ] && [ "${#steps[@]}" -eq "$(grep -c '"recorded": ' "$trace")" ] ||
    fail "$id: could not read the step names from the export"
  for s in "${steps[@]}"; do
    grep -q "<section [^>]*data-step=\"$s\"" "$dom" || fail "$id: no section for step $s"
  done
  claims=$(grep -c '"verdict": ' "$trace")
  rows=$(grep -o '<tr [^>]*data-claim=' "$dom" | wc -l)
  [ "$claims" -eq "$rows" ] || fail "$id: $claims claims in the trace, $rows claim rows drawn"
  for v in $(grep -o '"verdict": "[^"]*"' "$trace" | sed 's/^"verdict": "//; s/"$//' | sort -u); do
    grep -q "data-verdict=\"$v\"" "$dom" || fail "$id: verdict $v not shown"
  done
  echo "$id: ${#steps[@]} steps and $claims claims drawn"
done

# A next-token claim on the wrong token (docs/examples/model-lesson.json's next-10, whose probability is
# printed right): its row says the token differs first, with no deviation shown as the discrepancy.
model_page="$out/model-lesson.html"
if "$attntrace" report "$lessons/../docs/examples/model-lesson.json" -o "$model_page" &&
   browse --dump-dom "file://$model_page" >"$work/model-lesson.dom" 2>"$work/model-lesson.log"; then
  row=$(tr '\n' ' ' <"$work/model-lesson.dom" | grep -o '<tr [^>]*data-claim="next-10".*' | sed 's#</tr>.*##')
  [[ $row == *"the top next token is 'S'"*"its probability agrees; the token is what differs"* ]] ||
    fail "model-lesson: next-10 does not say first that the token differs: ${row:0:400}"
  [[ $row != *"largest deviation"* ]] || fail "model-lesson: next-10 shows a deviation for its agreeing probability"
  echo "model-lesson: a wrong next token said first"
else
  fail "model-lesson: attntrace report or chromium failed"
fi

# An agrees-from-given claim shows what its formula gives without the article's given values (the flagship's A).
row=$(tr '\n' ' ' <"$work/003-3.1-ring-fell.dom" | grep -o '<tr [^>]*data-claim="A".*' | sed 's#</tr>.*##')
[[ $row == *"without the given values:"* && $row == *"0.30"* ]] ||
  fail "003-3.1-ring-fell: claim A does not show the formula's values without the given ones: ${row:0:400}"

# What a reader does, on pages with elided matrices and with two heads:
# interact.js, run after the page's script, records the outcome on <body>.
here=$(dirname "$0")
for id in 003-3.3-multi-head 002-multi-head-shapes; do
  page="$work/$id.interact.html"
  awk -v f="$here/interact.js" '/^<\/body>$/ { print "<script>"; while ((getline l < f) > 0) print l; print "</script>" } { print }' \
    "$out/$id.html" >"$page"
  browse --dump-dom "file://$page" >"$work/$id.interact.dom" 2>"$work/$id.interact.log" || fail "$id: chromium failed"
  result=$(tr '\n' ' ' <"$work/$id.interact.dom" | grep -o '<body[^>]*>' | head -1)
  [[ $result == *'data-interactions="ok"'* ]] || fail "$id: interactions: $result"
  echo "$id: show all, hover and head toggles work"
done

# Every attention of every block, each with its own mask: a 2-block causal
# decoder (self- and cross-attention per block) at 6 tokens (tables) and at 40
# (canvases), a 64-token causal lesson, and a BERT-size block of 512 tokens
# (d_model 768, 12 heads, d_ff 3072), whose page keeps pooled maps and summaries.
"$attntrace" random --tokens 6 --d-model 8 --heads 2 --d-ff 16 --blocks 2 --decoder --mask causal --seed 3 -o "$work/decoder2.json" &&
"$attntrace" random --tokens 40 --d-model 16 --heads 2 --d-ff 16 --blocks 2 --decoder --mask causal --seed 5 -o "$work/decoder40.json" &&
"$attntrace" random --tokens 64 --d-model 32 --heads 4 --kv-heads 2 --d-ff 64 --mask causal --seed 4 -o "$work/causal64.json" &&
"$attntrace" random --tokens 512 --d-model 768 --heads 12 --d-ff 3072 --seed 7 -o "$work/bert512.json" ||
  fail "attntrace random failed"
for id in decoder2 decoder40 causal64 bert512; do
  html="$out/$id.html" dom="$work/$id.dom"
  "$attntrace" report "$work/$id.json" -o "$html" || { fail "$id: attntrace report failed"; continue; }
  start=$(date +%s%N)
  browse --dump-dom "file://$html" >"$dom" 2>"$work/$id.log" || { fail "$id: chromium failed"; continue; }
  wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  body=$(tr '\n' ' ' <"$dom" | grep -o '<body[^>]*>' | head -1)
  [[ $body == *'data-rendered="ok"'* ]] || fail "$id: the script did not finish: ${body:0:300}"
  [[ $body != *data-errors* ]] || fail "$id: errors recorded by the page: ${body:0:300}"
  if grep -E ':CONSOLE[:(]|Uncaught' "$work/$id.log" >&2; then fail "$id: console messages (above)"; fi
  drawn=$(grep -o 'data-drawn-ms="[0-9]*"' <<<"$body" | grep -o '[0-9]*')
  first=$(grep -o 'data-first-frame-ms="[0-9]*"' <<<"$body" | grep -o '[0-9]*')
  # measured, not asserted: after navigation start, the page's script done and its first screen laid out
  # with its canvases painted; and chromium's whole run (start-up included)
  echo "$id: page $(stat -c %s "$html") bytes, script done ${drawn:-?} ms and first screen ${first:-?} ms" \
       "after navigation start, chromium --dump-dom ${wall_ms} ms in all"
  # a canvas is painted when it is scrolled to: a copy paints them all (as printing does) for the checks below
  awk -v f="$here/paint_all.js" '/^<\/body>$/ { print "<script>"; while ((getline l < f) > 0) print l; print "</script>" } { print }' \
    "$html" >"$work/$id.painted.html"
  browse --dump-dom "file://$work/$id.painted.html" >"$work/$id.painted.dom" 2>/dev/null || fail "$id: chromium failed (painted copy)"
  painted=$(tr '\n' ' ' <"$work/$id.painted.dom" | grep -o '<body[^>]*>' | head -1 | grep -o 'data-painted="[^"]*"')
  [[ $painted =~ data-painted=\"([0-9]+)\ of\ ([0-9]+)\" ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] ||
    fail "$id: not every canvas painted when asked ($painted)"
done
# every step's section on the 512-token page, and the banner saying what the page keeps
grep -q '<p class="banner" id="page-kept">' "$work/bert512.dom" || fail "bert512: no banner saying what the page keeps"
[ "$(grep -o '<section [^>]*data-step=' "$work/bert512.dom" | wc -l)" -ge 30 ] || fail "bert512: step sections missing"
grep -q '<canvas [^>]*data-rows="256" data-cols="256"' "$work/bert512.dom" || fail "bert512: no pooled 256 x 256 canvas"
# above 32 tokens the attention is a canvas, not a table
grep -q '<canvas [^>]*class="heatmap"[^>]*data-rows="64" data-cols="64"' "$work/causal64.dom" || fail "causal64: no 64 x 64 canvas"
# Canvas axes: each attention canvas, painted, marks its rows and columns with positions every k tokens
# of the trace's tokens (a pooled map's 256 cells of 512 tokens: positions up to 511, not cell numbers)
python3 - "$work/causal64.painted.dom" 64 "$work/bert512.painted.dom" 512 <<'PY' || fail "canvas axes: positions missing or wrong (above)"
import re, sys
ok = True
for dom, tokens in zip(sys.argv[1::2], map(int, sys.argv[2::2])):
    canvases = re.findall(r'<canvas [^>]*class="heatmap"[^>]*>', open(dom, encoding="utf-8").read())
    attn = [c for c in canvases if 'aria-label="hook_pattern:' in c]
    for c in attn or [None]:
        a = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', c or ""))
        for axis in ("row", "col"):
            marks = [int(m) for m in a.get(axis + "-marks", "").split()]
            step = marks[1] - marks[0] if len(marks) > 1 else 0
            good = (a.get(axis + "-axis") == "positions" and marks and marks[0] == 0 and step > 0
                    and marks == list(range(0, tokens, step)))
            if not good:
                print(dom, axis, a.get(axis + "-axis"), marks, "expected positions 0, k, 2k, ... below", tokens)
                ok = False
    print(f"{dom.split('/')[-1]}: {len(attn)} attention canvases, axes every",
          [int(x) for x in re.findall(r'data-row-marks="0 (\d+)', attn[0])] if attn else "-", "of", tokens, "tokens")
sys.exit(0 if ok else 1)
PY
# decoder40: the canvases of cross-attention have no masked cell, those of causal self-attention some
python3 - "$work/decoder40.painted.dom" <<'PY' || fail "decoder40: masked cells in cross-attention canvases, or none in self-attention"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
masked = {}
for sec in re.split(r'(?=<section )', dom):
    m = re.match(r'<section [^>]*data-attention="([^"]+)"', sec)
    if m:
        masked[m.group(1)] = [int(x) for x in re.findall(r'<canvas [^>]*data-masked="(\d+)"', sec)]
cross = [n for a, v in masked.items() if "cross_attn" in a for n in v]
self_ = [n for a, v in masked.items() if "cross_attn" not in a for n in v]
print("decoder40 canvases: cross-attention masked cells", cross, "self-attention", self_)
sys.exit(0 if cross and self_ and max(cross) == 0 and min(self_) > 0 else 1)
PY
# decoder2: its memory listed under its tokens, what the cross-attention's keys are
grep -q '<b>memory (what cross-attention reads) </b><span>m0</span>' "$work/decoder2.dom" || fail "decoder2: its memory tokens are not listed"
# decoder2: four attention sections, blocks 0 and 1, self and cross
for a in blocks.0.attn blocks.0.cross_attn blocks.1.attn blocks.1.cross_attn; do
  grep -q "<section [^>]*id=\"attention-$a\"" "$work/decoder2.dom" || fail "decoder2: no attention section for $a"
done
# a cross-attention masks nothing: no hatched cell in its sections; its causal self-attention has some
counts=$(python3 - "$work/decoder2.dom" <<'PY'
import sys
from html.parser import HTMLParser
class Count(HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.masked = {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section": self.stack.append(a.get("data-attention"))
        if tag == "td" and "masked" in (a.get("class") or "").split():
            for s in self.stack:
                if s: self.masked[s] = self.masked.get(s, 0) + 1
    def handle_endtag(self, tag):
        if tag == "section" and self.stack: self.stack.pop()
c = Count(); c.feed(open(sys.argv[1], encoding="utf-8").read())
print(sum(n for s, n in c.masked.items() if "cross_attn" in s), c.masked.get("blocks.1.attn.", 0))
PY
)
read -r cross self <<<"$counts"
[ "${cross:-x}" = 0 ] || fail "decoder2: ${cross:-?} hatched cells in cross-attention"
[ "${self:-0}" -gt 0 ] || fail "decoder2: no hatched cell in block 1's causal self-attention"
# causal64: every one of the 4 query heads drawn (GQA: 2 K/V heads), with the K/V head each reads
heads=$(grep -o 'head h[0-9]* · reads K/V head kv[0-9]' "$work/causal64.dom" | sort -u | wc -l)
[ "$heads" -eq 4 ] || fail "causal64: $heads of 4 heads drawn with their K/V head"
# causal64's head view starts with its first head alone on (64 tokens: every head at once is a tangle);
# decoder2's (6 tokens) with every head on
for case in "causal64 true false false false" "decoder2 true true"; do
  read -r id want <<<"$case"
  got=$(python3 -c 'import re, sys
heads = re.search(r"<div class=\"heads\">(.*?)</div>", open(sys.argv[1], encoding="utf-8").read(), re.S)
print(" ".join(re.findall(r"aria-pressed=\"(\w+)\"[^>]*data-head=", heads.group(1)) if heads else []))' "$work/$id.dom")
  [ "$got" = "$want" ] || fail "$id: the head view's heads on at first: '$got', expected '$want'"
done
# a lesson's description heads its page
grep -q '<p class="description">' "$work/003-3.1-ring-fell.dom" || fail "003-3.1-ring-fell: the description is not shown"
echo "decoder2, causal64: every attention drawn with its own mask; every head of a GQA lesson shown"

# The model view: a click on a head's thumbnail opens that attention's head view with that head alone on.
for id in decoder2 decoder40 causal64; do
  page="$work/$id.model.html"
  awk -v f="$here/interact_model.js" '/^<\/body>$/ { print "<script>"; while ((getline l < f) > 0) print l; print "</script>" } { print }' \
    "$out/$id.html" >"$page"
  browse --dump-dom "file://$page" >"$work/$id.model.dom" 2>"$work/$id.model.log" || fail "$id: chromium failed"
  result=$(tr '\n' ' ' <"$work/$id.model.dom" | grep -o '<body[^>]*>' | head -1)
  [[ $result == *'data-model-click="ok"'* ]] || fail "$id: model view click: $result"
  echo "$id: the model view's last head opens its head view ($(grep -o 'data-clicked="[^"]*"' <<<"$result"))"
done
# The pipeline: drawn from the steps; the decoder's blocks have self-attention, cross-attention and FFN frames
for part in attn cross ffn; do
  grep -q "<div class=\"pipe-part p-$part\"" "$work/decoder2.dom" || fail "decoder2: no $part in the pipeline"
done

# Traces drawn without their lesson: an export, an .npy folder, another implementation's minimal trace.
"$attntrace" export "$lessons/002-gqa-groups.json" -o "$work/t-export.json" || fail "export for the trace pages failed"
"$attntrace" export "$lessons/002-gqa-groups.json" --npy "$work/t-npy" -o /dev/null || fail "export --npy failed"
cat >"$work/t-minimal.json" <<'JSON'
{"format": "attntrace-trace", "version": 2, "steps": [
  {"name": "blocks.0.attn.hook_pattern", "shape": [2, 2, 2], "values": [[[1, 0], [0.25, 0.75]], [[1, 0], [0.5, 0.5]]]},
  {"name": "my_kernel.out", "shape": [3], "values": [1, 2, 3]}]}
JSON
for t in t-export.json t-npy t-minimal.json; do
  html="$out/$t.html"
  "$attntrace" report "$work/$t" -o "$html" || { fail "report of the trace $t failed"; continue; }
  browse --dump-dom "file://$html" >"$work/$t.dom" 2>"$work/$t.log" || { fail "$t: chromium failed"; continue; }
  tr '\n' ' ' <"$work/$t.dom" | grep -o '<body[^>]*>' | head -1 | grep -q 'data-rendered="ok"' || fail "$t: the script did not finish"
  if grep -E ':CONSOLE[:(]|Uncaught' "$work/$t.log" >&2; then fail "$t: console messages (above)"; fi
  grep -q '<section [^>]*id="attention-blocks.0.attn"' "$work/$t.dom" || fail "$t: no attention section"
done
grep -q 'data-step="my_kernel.out"' "$work/t-minimal.json.dom" || fail "t-minimal.json: its own step is not drawn"
echo "traces drawn: an export, an .npy folder and a minimal trace"

# A diff's page (report A B): one scale for every step. B is A with a cell of one step moved by 0.5, one
# of another by 0.01 (both beyond the tolerance) and one of a third by 1e-6 (float noise, within it):
# the 0.01 is paler than the 0.5 (each step against its own largest would draw both darkest), the
# noise is drawn as within the tolerance, and untouched cells as equal.
"$attntrace" export "$lessons/003-3.1-ring-fell.json" -o "$work/diff-a.json" || fail "export for the diff page failed"
python3 - "$work/diff-a.json" "$work/diff-b.json" <<'PY' || fail "diff page: could not write B"
import json, sys
t = json.load(open(sys.argv[1], encoding="utf-8"))
def first_number(v):  # the path to the first finite number of a nested list
    if isinstance(v, list):
        for i, x in enumerate(v):
            p = first_number(x)
            if p is not None: return [i] + p
        return None
    return [] if isinstance(v, (int, float)) else None
moved = 0
for step, by in zip([s for s in t["steps"] if s.get("values") is not None and first_number(s["values"]) is not None], (0.5, 0.01, 1e-6)):
    path, v = first_number(step["values"]), step["values"]
    for i in path[:-1]: v = v[i]
    v[path[-1]] += by
    moved += 1
json.dump(t, open(sys.argv[2], "w", encoding="utf-8"))
sys.exit(0 if moved == 3 else 1)
PY
"$attntrace" report "$work/diff-a.json" "$work/diff-b.json" -o "$out/diff.html" || fail "report A B failed"
browse --dump-dom "file://$out/diff.html" >"$work/diff.dom" 2>"$work/diff.log" || fail "diff: chromium failed"
if grep -E ':CONSOLE[:(]|Uncaught' "$work/diff.log" >&2; then fail "diff: console messages (above)"; fi
python3 - "$work/diff.dom" <<'PY' || fail "diff page: not one scale, or equal and within-tolerance cells not drawn apart (above)"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
body = re.search(r'<body[^>]*>', dom).group(0)
steps = re.split(r'(?=<section class="step)', dom)[1:]
def cells(sec, kind):
    return re.findall(r'<td title="[^"]*" class="diff-%s"(?: style="([^"]*)")?>' % kind, sec)
beyond = [cells(s, "beyond") for s in steps]
shades = [float(re.search(r'rgba\(var\(--diverges\), ([0-9.]+)\)', c[0]).group(1)) for c in beyond if c]
within = sum(len(cells(s, "within")) for s in steps)
equal = sum(len(cells(s, "equal")) for s in steps)
print("diff page: beyond shades", shades, "within cells", within, "equal cells", equal)
ok = 'data-rendered="ok"' in body and "data-errors" not in body
sys.exit(0 if ok and len(shades) == 2 and shades[1] < shades[0] and within == 1 and equal > 10 else 1)
PY

# A model's page (report --model): its next-token table is the one run computes (run --json's
# model.next_tokens, the same 10 tokens in the same order), drawn as its own section.
models=$(dirname "$lessons")/tests/models
text="the ring fell and the"
if "$attntrace" report --model "$models/tiny-gpt2" --text "$text" -o "$out/model.html" &&
   "$attntrace" run --model "$models/tiny-gpt2" --text "$text" --json >"$work/model-run.json"; then
  browse --dump-dom "file://$out/model.html" >"$work/model.dom" 2>"$work/model.log" || fail "model: chromium failed"
  body=$(tr '\n' ' ' <"$work/model.dom" | grep -o '<body[^>]*>' | head -1)
  [[ $body == *'data-rendered="ok"'* && $body != *data-errors* ]] || fail "model: the page did not draw cleanly: ${body:0:300}"
  if grep -E ':CONSOLE[:(]|Uncaught' "$work/model.log" >&2; then fail "model: console messages (above)"; fi
  python3 - "$work/model.dom" "$work/model-run.json" <<'PY' || fail "model: the next-token table is not run's (above)"
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
want = [t["id"] for t in json.load(open(sys.argv[2], encoding="utf-8"))["model"]["next_tokens"]]
sec = re.search(r'<section class="next-token" id="next-token">(.*?)</section>', dom, re.S)
got = [int(x) for x in re.findall(r'<tr data-token-id="(\d+)"', sec.group(1))] if sec else None
fmt = re.findall(r'<table class="matrix next-tokens" data-format="(\w+)"><caption class="num-format">numbers: ([^<]*)<', dom)
print("model: next tokens drawn", got, "run's", want, "format", fmt)
sys.exit(0 if sec and got == want and len(want) == 10 and fmt else 1)
PY
  grep -q '<a href="#next-token">Next token</a>' "$work/model.dom" || fail "model: no link to the next-token section"
  # Its attention tables in one fixed format, as the terminal's: a trained model's weights reach 1e-10, which
  # put every cell in scientific notation; a weight that rounds to 0 but is not 0 is written <0.0001.
  python3 - "$work/model.dom" <<'PY' || fail "model: attention tables not in fixed decimals (above)"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
tables = [t for sec in re.findall(r'<section class="attention".*?</section>', dom, re.S)
          for t in re.findall(r'<table class="matrix heat"(.*?)</table>', sec, re.S)]
cells = [c for t in tables for c in re.findall(r'<td [^>]*>([^<]*)</td>', t)]
formats = {re.search(r'data-format="(\w+)"', t).group(1) for t in tables}
captions = set(re.findall(r'<caption class="num-format">numbers: ([^<]*)<', "".join(tables)))
bad = [c for c in cells if not re.fullmatch(r"[01]\.[0-9]{4}|&lt;0\.0001", c)]
print("model: attention tables", len(tables), "formats", formats, "captions", captions, "cells", len(cells),
      "written <0.0001:", cells.count("&lt;0.0001"), "others:", bad[:5])
said = all("&lt;0.0001" not in t or "&lt;0.0001: a weight that is not 0 but rounds to it" in t for t in tables)
sys.exit(0 if tables and formats == {"fixed"} and not bad and cells.count("&lt;0.0001") > 0 and said else 1)
PY
else
  fail "model: attntrace report --model or run --model failed"
fi

# Vocabulary pieces of control characters (byte-level BPE has one per byte): drawn as escapes (\x08) or
# marks (⇥ ↵), never raw (an empty box), each with a hover saying what it stands for.
if "$attntrace" report --model "$models/tiny-gpt2" --text $'the\bring\tfell\n' -o "$out/model-controls.html"; then
  browse --dump-dom "file://$out/model-controls.html" >"$work/model-controls.dom" 2>/dev/null || fail "model-controls: chromium failed"
  python3 - "$work/model-controls.dom" <<'PY' || fail "model-controls: a control character drawn raw, or without its hover (above)"
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
chips = re.search(r'<div class="tokens">(.*?)</div>', dom, re.S).group(1)
tokens = [(html.unescape(t or ""), html.unescape(x)) for t, x in re.findall(r'<span(?: title="([^"]*)")?>([^<]*)</span>', chips)]
text = re.sub(r"<script.*?</script>", "", dom, flags=re.S)
raw = [hex(ord(c)) for c in text if (ord(c) < 0x20 and c not in "\n\t\r") or 0x7f <= ord(c) <= 0x9f]
print("model-controls: tokens", tokens, "raw controls in the page:", raw[:5])
want = {"\\x08": "U+0008 BS (backspace), a control character", "⇥": "a tab", "↵": "a newline"}
ok = all(any(x == k and v in t for t, x in tokens) for k, v in want.items()) and not raw
sys.exit(0 if ok else 1)
PY
else
  fail "model-controls: attntrace report --model failed"
fi

# An intervened run's page (its Interventions section) and a patching page (its heatmap table), drawn without errors.
tiny="$lessons/../tests/models/tiny-gpt2"
if "$attntrace" report --model "$tiny" --text "the ring fell" --ablate blocks.0.attn.h1 -o "$out/ablated.html" &&
   "$attntrace" patch --model "$tiny" --clean "the ring fell from the king" --corrupt "the king fell from the ring" \
     --answer ' ring' --wrong ' king' --report "$out/patching.html" >/dev/null; then
  for id in ablated patching; do
    browse --dump-dom "file://$out/$id.html" >"$work/$id.dom" 2>"$work/$id.log" || { fail "$id: chromium failed"; continue; }
    body=$(tr '\n' ' ' <"$work/$id.dom" | grep -o '<body[^>]*>' | head -1)
    [[ $body == *'data-rendered="ok"'* ]] || fail "$id: the script did not finish: $body"
    if grep -E ':CONSOLE[:(]|Uncaught' "$work/$id.log" >&2; then fail "$id: console messages (above)"; fi
  done
  grep -q '<section class="interventions" id="interventions"' "$work/ablated.dom" || fail "ablated: no Interventions section"
  grep -q 'next-tokens-before-after' "$work/ablated.dom" || fail "ablated: no next tokens before and after"
  cells=$(grep -o '<td style="background: rgb' "$work/patching.dom" | wc -l)
  [ "$cells" -eq 8 ] || fail "patching: $cells heatmap cells drawn, expected 2 blocks x 4 heads"
  echo "interventions and patching: drawn"
  page="$work/ablated.interact.html"
  awk -v f="$here/interact_temperature.js" '/^<\/body>$/ { print "<script>"; while ((getline l < f) > 0) print l; print "</script>" } { print }' \
    "$out/ablated.html" >"$page"
  browse --dump-dom "file://$page" >"$work/ablated.interact.dom" 2>/dev/null || fail "ablated: chromium failed"
  result=$(tr '\n' ' ' <"$work/ablated.interact.dom" | grep -o '<body[^>]*>' | head -1)
  [[ $result == *'data-interactions="ok"'* ]] || fail "temperature slider: $result"
  echo "temperature slider: T = 1 is the run's table, T = 0 the argmax, T = 2 flatter"
else
  fail "interventions or patching: attntrace report or patch failed"
fi

# Screenshots of the report at a phone's width and a wide screen's.
cp "$out/003-3.1-ring-fell.html" "$out/flagship.html"
for id in flagship causal64 model decoder2 bert512; do
  for width in 500 1400; do
    png="$out/$id-$width.png"
    browse --screenshot="$png" --window-size=$width,2400 "file://$out/$id.html" >/dev/null 2>&1 || fail "screenshot at $width px failed"
    size=$(stat -c %s "$png" 2>/dev/null || echo 0)
    [ "$size" -gt "$min_png_bytes" ] || fail "screenshot $png missing or blank ($size bytes)"
    echo "screenshot: $png ($size bytes)"
  done
done

for id in "${screenshot_lessons[@]}"; do
  png="$out/$id.png"
  browse --screenshot="$png" --window-size=1280,2000 "file://$out/$id.html" >/dev/null 2>"$work/$id.shot.log" ||
    fail "$id: screenshot failed"
  size=$(stat -c %s "$png" 2>/dev/null || echo 0)
  [ "$size" -gt "$min_png_bytes" ] || fail "$id: screenshot $png missing or blank ($size bytes)"
  echo "screenshot: $png ($size bytes)"
done

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "report_chromium: every page drawn without errors"
