#!/usr/bin/env bash
# Fuzzes the lesson reader, the trace reader, the safetensors header reader, the tokenizers (WordPiece, byte-level BPE, SentencePiece) and the article reader (draft) with libFuzzer (docs/fuzzing.md).
#   bash scripts/fuzz.sh [SECONDS] [BUILD_DIR]
# One budget of SECONDS (default 240) of wall time shared by the targets, two
# at a time (one per core): fuzz_lesson, whose input reaches the most code,
# has one core for all of it; fuzz_trace, fuzz_safetensors, fuzz_wordpiece,
# fuzz_bpe, fuzz_sentencepiece and fuzz_article share the other, SECONDS / 6 each. Builds
# them with clang (ASan + UBSan) in BUILD_DIR (default build-fuzz; a folder
# already configured, as CI's sanitizer build, is used as it is), seeds each
# with the committed inputs (lessons/, golden/, tests/bad-input/, the saved
# regressions), and runs it. A crash, a sanitizer report, a timeout or a
# memory blow-up fails the script and leaves the input in
# BUILD_DIR/artifacts/: add it to tests/fuzz-regressions/ with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-240}"
build="${2:-build-fuzz}"

if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNTRACE_FUZZ=ON -DATTNTRACE_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target fuzz_lesson fuzz_trace fuzz_safetensors fuzz_wordpiece fuzz_bpe fuzz_sentencepiece fuzz_article

mkdir -p "$build/artifacts"

# fuzz_one TARGET SECONDS: one target from a fresh working corpus (libFuzzer
# adds to its first folder, and the committed seeds must stay as they are);
# its log in BUILD_DIR/fuzz-TARGET.log, its status the script's.
fuzz_one() {
  local target="$1" budget="$2" corpus="$build/corpus-$1" seeds dict=() max_len=65536
  rm -rf "$corpus" && mkdir -p "$corpus"
  case "$target" in
    lesson) seeds=(lessons lessons/cost tests/bad-input tests/bad-input/cost tests/fuzz-regressions/lesson)
            # The lesson format's keys, enum values, step names and limits, for libFuzzer's byte mutations.
            dict=(-dict=fuzz/lesson.dict) ;;
    safetensors) seeds=(tests/models/tiny-gpt2-f16 tests/models/tiny-gpt2-bf16-sharded tests/fuzz-regressions/safetensors)
                 max_len=200000 ;;
    wordpiece) seeds=(tests/models/tiny-bert tests/fuzz-regressions/wordpiece) ;;
    bpe) # Qwen2's tokenizer.json (its NFC normalizer) without the folder's weights.
         mkdir -p "$build/seeds-bpe" && cp tests/models/tiny-qwen2/tokenizer.json "$build/seeds-bpe/qwen2-tokenizer.json"
         seeds=(tests/models/tiny-gpt2 tests/models/tiny-llama3-tokenizer "$build/seeds-bpe" tests/fuzz-regressions/bpe) ;;
    sentencepiece) # libFuzzer takes folders: the committed tokenizer.model files are copied into one.
         mkdir -p "$build/seeds-sentencepiece" && cp tests/models/tiny-llama/tokenizer.model "$build/seeds-sentencepiece/llama.model"
         cp tests/models/spm-nmt-nfkc/tokenizer.model "$build/seeds-sentencepiece/nmt-nfkc.model"
         seeds=("$build/seeds-sentencepiece" tests/fuzz-regressions/sentencepiece)
         max_len=262144 ;;
    article) # the saved articles (a Markdown page, an HTML page, a notebook) and the repository's own Markdown;
             # inputs up to 16 KiB: each is read as five formats, twice, and a page's worth reaches every scanner
             seeds=(tests/fuzz-regressions/article docs)
             max_len=16384 ;;
    *) seeds=(golden tests/fuzz-regressions/trace); [ -d tests/bad-trace ] && seeds+=(tests/bad-trace) ;;
  esac
  echo "fuzz: $target for ${budget}s, seeds: ${seeds[*]}"
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: 2 GiB is a
  # blow-up (the targets cap a run at 64 MiB, fuzz/fuzz_limits.hpp).
  if ! "$build/fuzz_$target" "$corpus" "${seeds[@]}" "${dict[@]}" -max_total_time="$budget" -timeout=10 \
        -rss_limit_mb=2048 -max_len=$max_len -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$target-" > "$build/fuzz-$target.log" 2>&1; then
    echo "fuzz: $target FAILED; the last lines of $build/fuzz-$target.log:"
    tail -n 40 "$build/fuzz-$target.log"
    return 1
  fi
  grep -E "^stat::number_of_executed_units|^Done" "$build/fuzz-$target.log" | sed "s/^/fuzz: $target: /"
}

# fuzz_lane SECONDS TARGET...: the targets one after another, sharing SECONDS.
fuzz_lane() {
  local budget="$1" status=0; shift
  [ $# -eq 0 ] && return 0
  local each=$(( budget / $# > 10 ? budget / $# : 10 ))
  for target in "$@"; do fuzz_one "$target" "$each" || status=1; done
  return $status
}

# Two lanes: fuzz_lesson alone on one (when it is asked for), the rest on the other.
targets=(${FUZZ_TARGETS:-lesson trace safetensors wordpiece bpe sentencepiece article})
lane1=() lane2=()
for target in "${targets[@]}"; do
  if [ "$target" = lesson ] || { [ ${#lane1[@]} -le ${#lane2[@]} ] && [[ " ${targets[*]} " != *" lesson "* ]]; }; then
    lane1+=("$target")
  else
    lane2+=("$target")
  fi
done
fuzz_lane "$seconds" "${lane1[@]}" & first=$!
status=0
fuzz_lane "$seconds" "${lane2[@]}" || status=1
wait $first || status=1
ls "$build/artifacts" | sed 's/^/fuzz: artifact: /' || true
exit $status
