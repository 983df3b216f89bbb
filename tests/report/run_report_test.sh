#!/usr/bin/env bash
# The HTML report in a real browser (ctest -R report_chromium):
#   run_report_test.sh ATTNTRACE LESSONS_DIR OUT_DIR
# For every lesson: `attntrace report`, then headless Chromium loads the page
# and dumps the DOM its script built. Fails unless every step of the lesson's
# trace has its <section data-step=NAME>, every claim its row with its
# verdict, the script finished (body data-rendered="ok") with no error
# recorded (body data-errors), and Chromium's log shows no console message
# (the page logs nothing; an uncaught error or a refused fetch would show).
# Then saves screenshots of three pages in OUT_DIR (the HTML stays there too).
set -uo pipefail

attntrace=$1 lessons=$2 out=$3
# Pages photographed: one head, two heads, a causal mask.
screenshot_lessons=(003-3.1-ring-fell 003-3.3-multi-head 004-causal-mask-example)
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
  # measured, not asserted: the page's own time to the end of drawing, and chromium's whole run (start-up included)
  echo "$id: page $(stat -c %s "$html") bytes, drawn ${drawn:-?} ms after navigation start, chromium --dump-dom ${wall_ms} ms in all"
done
# every step's section on the 512-token page, and the banner saying what the page keeps
grep -q '<p class="banner" id="page-kept">' "$work/bert512.dom" || fail "bert512: no banner saying what the page keeps"
[ "$(grep -o '<section [^>]*data-step=' "$work/bert512.dom" | wc -l)" -ge 30 ] || fail "bert512: step sections missing"
grep -q '<canvas [^>]*data-rows="256" data-cols="256"' "$work/bert512.dom" || fail "bert512: no pooled 256 x 256 canvas"
# above 32 tokens the attention is a canvas, not a table
grep -q '<canvas [^>]*class="heatmap" data-rows="64" data-cols="64"' "$work/causal64.dom" || fail "causal64: no 64 x 64 canvas"
# decoder40: the canvases of cross-attention have no masked cell, those of causal self-attention some
python3 - "$work/decoder40.dom" <<'PY' || fail "decoder40: masked cells in cross-attention canvases, or none in self-attention"
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

# Screenshots of the report at a phone's width and a wide screen's.
for id in causal64 decoder2 bert512; do
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
