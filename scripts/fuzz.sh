#!/usr/bin/env bash
# Fuzzes the lesson reader, the trace reader, the safetensors header reader and the tokenizers (WordPiece, byte-level BPE, SentencePiece) with libFuzzer (docs/fuzzing.md).
#   bash scripts/fuzz.sh [SECONDS_EACH] [BUILD_DIR]
# Builds fuzz_lesson, fuzz_trace, fuzz_safetensors, fuzz_wordpiece, fuzz_bpe and fuzz_sentencepiece with clang (ASan + UBSan), seeds each with
# the committed inputs (lessons/, golden/, tests/bad-input/, the saved
# regressions), and runs each for SECONDS_EACH (default 60). A crash, a
# sanitizer report, a timeout or a memory blow-up fails the script and leaves
# the input in BUILD_DIR/artifacts/: add it to tests/fuzz-regressions/ with
# the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build="${2:-build-fuzz}"

CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNTRACE_FUZZ=ON -DATTNTRACE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j2 --target fuzz_lesson fuzz_trace fuzz_safetensors fuzz_wordpiece fuzz_bpe fuzz_sentencepiece

mkdir -p "$build/artifacts"
status=0
targets="${FUZZ_TARGETS:-lesson trace safetensors wordpiece bpe sentencepiece}"
for target in $targets; do
  # A fresh working corpus each run: libFuzzer adds to its first folder, and
  # the committed seeds must stay as they are.
  corpus="$build/corpus-$target"
  rm -rf "$corpus" && mkdir -p "$corpus"
  if [ "$target" = lesson ]; then seeds=(lessons lessons/cost tests/bad-input tests/bad-input/cost tests/fuzz-regressions/lesson)
  elif [ "$target" = safetensors ]; then
    seeds=(tests/models/tiny-gpt2-f16 tests/models/tiny-gpt2-bf16-sharded tests/fuzz-regressions/safetensors)
  elif [ "$target" = wordpiece ]; then seeds=(tests/models/tiny-bert tests/fuzz-regressions/wordpiece)
  elif [ "$target" = bpe ]; then
    # Qwen2's tokenizer.json (its NFC normalizer) without the folder's weights.
    mkdir -p "$build/seeds-bpe" && cp tests/models/tiny-qwen2/tokenizer.json "$build/seeds-bpe/qwen2-tokenizer.json"
    seeds=(tests/models/tiny-gpt2 tests/models/tiny-llama3-tokenizer "$build/seeds-bpe" tests/fuzz-regressions/bpe)
  elif [ "$target" = sentencepiece ]; then
    # libFuzzer takes folders: the committed tokenizer.model files are copied into one.
    mkdir -p "$build/seeds-sentencepiece" && cp tests/models/tiny-llama/tokenizer.model "$build/seeds-sentencepiece/llama.model"
    cp tests/models/spm-nmt-nfkc/tokenizer.model "$build/seeds-sentencepiece/nmt-nfkc.model"
    seeds=("$build/seeds-sentencepiece" tests/fuzz-regressions/sentencepiece)
  else seeds=(golden tests/fuzz-regressions/trace); [ -d tests/bad-trace ] && seeds+=(tests/bad-trace); fi
  # The lesson format's keys, enum values, step names and limits, for libFuzzer's byte mutations.
  dict=(); [ "$target" = lesson ] && dict=(-dict=fuzz/lesson.dict)
  echo "fuzz: $target for ${seconds}s, seeds: ${seeds[*]}"
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: 2 GiB is a
  # blow-up (the targets cap a run at 64 MiB, fuzz/fuzz_limits.hpp).
  if ! "$build/fuzz_$target" "$corpus" "${seeds[@]}" "${dict[@]}" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=$(case $target in safetensors) echo 200000;; sentencepiece) echo 262144;; *) echo 65536;; esac) -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$target-" > "$build/fuzz-$target.log" 2>&1; then
    echo "fuzz: $target FAILED; the last lines of $build/fuzz-$target.log:"
    tail -n 40 "$build/fuzz-$target.log"
    status=1
  else
    grep -E "^stat::number_of_executed_units|^Done" "$build/fuzz-$target.log" | sed "s/^/fuzz: $target: /"
  fi
done
ls "$build/artifacts" | sed 's/^/fuzz: artifact: /' || true
exit $status
