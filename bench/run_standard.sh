#!/usr/bin/env bash
# The standard benchmark: the encoder block at BERT-base sizes (d_model 768,
# 12 heads, d_ff 3072; no mask, ReLU) for n = 128, 512, 2048 tokens on 1 and 2
# threads, with `attntrace bench` (--trace full and none, interleaved), and,
# when python3-torch is installed, PyTorch on the same shapes three ways right
# after it: nn.TransformerEncoderLayer (records nothing), the same layer step
# by step keeping every intermediate as TransformerLens' run_with_cache would
# (--keep-all), and attention alone. Writes the table to the section "## Standard run" of
# docs/performance.md (replaced if present, appended if not), with the date,
# the machine, the commands and the environment.
#
# Usage: bench/run_standard.sh [ATTNTRACE] [options]
#   ATTNTRACE        the attntrace binary (default: ./build/attntrace)
#   --out FILE       the markdown file to update (default: docs/performance.md of this clone)
#   --print          print the section and leave the file alone
#   --no-torch       skip PyTorch even if it is installed
#   --repeat "A B C" timed runs for n = 128, 512, 2048 (default "31 15 7"; odd: the median is a sample)
#   --rounds R       rounds per n and thread count (default 3): each round runs
#                    ours, then PyTorch's three right after; a ratio is taken
#                    within each round, and the table gives the median over the
#                    rounds (the targets table also their range). The machine's
#                    neighbours move PyTorch's time and ours by 5-20% from one
#                    minute to the next; a ratio from one round can read a
#                    target met that the next reads missed.
#   --raw DIR        keep the raw JSON outputs in DIR (default: a new directory under /tmp)
#   --decode DIR     also the decode row: a GPT-2-small-sized F32 checkpoint
#                    (tests/models/make_tiny_models.py --gpt2-small DIR) decoded
#                    one token at a time, ms per token on 1 and 2 threads, each
#                    round against PyTorch's KV-cache loop on the same checkpoint
#                    (bench/torch_decode.py) and against the memory limit: the
#                    bytes of weights a token reads over the read bandwidth
#                    measured right before (bench/read_bandwidth.cpp, built here
#                    with c++). Ours: `bench --model DIR --ids (32 ids) --generate 32`,
#                    each window of decode --generate timed in the process: the
#                    median ms of the generated tokens (and of the prompt's
#                    windows); and the wall time of `decode --ids` over 64 ids,
#                    each step checked against the causal run, beside `run`'s.
#   --decode-only    only the decode row (with --decode): printed, the file left alone
#   --gpt2 DIR       also the GPT-2 trace row: a GPT-2-small-sized F32 checkpoint
#                    (tests/models/make_tiny_models.py --gpt2-small DIR, as --decode's)
#                    run over 512 ids on one thread with the full trace, each round
#                    `bench --model DIR --ids (512 ids) --trace full --repeat 5 --json`
#                    (the stack: bench's `block` row) then PyTorch's forward keeping
#                    every intermediate as TransformerLens' run_with_cache would
#                    (bench/torch_gpt2_trace.py, 1 warm-up, median of 5), the ratio
#                    taken within each round. PyTorch's logits are checked each round
#                    against ours (`export --trace unembed --npy`, once before the rounds)
#   --gpt2-only      only the GPT-2 trace row (with --gpt2): printed, the file left alone
#   --llama DIR      also the Llama-1B row: a Llama-1B-sized BF16 checkpoint
#                    (/usr/bin/python3 tests/models/make_tiny_llama.py --llama-1b DIR)
#                    run over 256 ids on one thread, each round `bench --model DIR
#                    --ids (256 ids) --trace summary --repeat 3 --json` (the stack's
#                    time against the FMA peak measured in the same process: the
#                    limit is the stack's FLOPs at that peak), the peak memory of
#                    `run` over them (/usr/bin/time -v's maximum resident set), and
#                    PyTorch's forward over the same ids (bench/torch_llama_forward.py:
#                    bf16 weights widened to float32 once before timing, 1 warm-up,
#                    median of 3; its logits checked against ours, `export --trace
#                    unembed --npy`, once before the rounds), the ratio within each round
#   --llama-only     only the Llama-1B row (with --llama): printed, the file left alone
#                    (the -only options combine: --decode-only --llama-only prints both rows)
#   --ours-spin      run attntrace without OMP_WAIT_POLICY=PASSIVE (libgomp's default:
#                    its threads spin between parallel regions; on a quiet machine its
#                    2-thread block was ~5% faster so, but its threads then spin against
#                    OpenBLAS's in the comparison columns)
#
# Thread settings, for N threads:
#   PyTorch:   OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N OMP_WAIT_POLICY=PASSIVE
#              and torch.set_num_threads(N). Debian's torch sends fp32 matmul to
#              OpenBLAS, whose pool torch.set_num_threads does not set; without
#              these the OpenMP and OpenBLAS pools fight over the cores
#              (docs/performance.md); PASSIVE was its fastest here.
#   attntrace: the same variables and --threads N (its OpenBLAS columns run in
#              the same process as our OpenMP kernels, so the same trap applies).
#
# OpenBLAS (PyTorch's fp32 matmul and bench's BLAS column) picks its kernels by
# the core it detects, or by $OPENBLAS_CORETYPE; 0.3.21 takes some newer CPUs
# for a Prescott (4x slower), and an environment may set an older core than
# the CPU has (Haswell's AVX2 kernels on AVX-512 hardware ran PyTorch 1.8x
# slower). Before the runs, bench/openblas_cores.py (~20 s) tries each
# candidate core in a child process of its own: the core OpenBLAS detects, the
# caller's $OPENBLAS_CORETYPE if set, and the cores the CPU's flags allow and
# this OpenBLAS knows (SkylakeX, Cooperlake; Haswell, Zen). Each child checks
# that OpenBLAS took the core (openblas_get_corename), times fp32 products of
# this run's shapes on one thread and checks every entry against a float64
# product within the worst-case bound of a float32 sum of K products. The
# comparison columns (PyTorch's runs, and attntrace's runs for their BLAS
# column; our own kernels do not use OpenBLAS) then run with
# OPENBLAS_CORETYPE set to the fastest core that computed correctly, also when
# the caller set another (the caller's value is overridden for these runs only
# if a faster core is correct). The table says which core ran, which were
# tried with their GFLOP/s and correctness, and what the caller had set; the
# helper's JSON is kept as openblas-cores.json in the raw directory.
#
# Takes ~4-5 minutes on 2 cores with 3 rounds (n = 2048 needs ~1.4 GB for the full trace).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=./build/attntrace
OUT=$ROOT/docs/performance.md
PRINT_ONLY=0
USE_TORCH=1
REPEATS="31 15 7"
ROUNDS=3
RAW=""
OURS_PASSIVE=1
DECODE_MODEL=""
DECODE_ONLY=0
LLAMA_MODEL=""
LLAMA_ONLY=0
GPT2_MODEL=""
GPT2_ONLY=0
PYTHON=${PYTHON:-/usr/bin/python3}   # Debian's torch is for the system python
TOKENS=(128 512 2048)
THREADS=(1 2)

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

positional=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --out) OUT=$2; shift 2 ;;
        --print) PRINT_ONLY=1; shift ;;
        --no-torch) USE_TORCH=0; shift ;;
        --repeat) REPEATS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --raw) RAW=$2; shift 2 ;;
        --ours-spin) OURS_PASSIVE=0; shift ;;
        --decode) DECODE_MODEL=$2; shift 2 ;;
        --decode-only) DECODE_ONLY=1; PRINT_ONLY=1; shift ;;
        --llama) LLAMA_MODEL=$2; shift 2 ;;
        --llama-only) LLAMA_ONLY=1; PRINT_ONLY=1; shift ;;
        --gpt2) GPT2_MODEL=$2; shift 2 ;;
        --gpt2-only) GPT2_ONLY=1; PRINT_ONLY=1; shift ;;
        -*) echo "run_standard.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -le 1 ] || { echo "run_standard.sh: one binary path at most (see --help)" >&2; exit 2; }
[ ${#positional[@]} -eq 0 ] || BIN=${positional[0]}
case "$ROUNDS" in ''|*[!0-9]*|0) echo "run_standard.sh: --rounds takes a whole number from 1, found '$ROUNDS'" >&2; exit 2 ;; esac
read -r -a REP <<<"$REPEATS"
[ ${#REP[@]} -eq ${#TOKENS[@]} ] || { echo "run_standard.sh: --repeat takes ${#TOKENS[@]} numbers" >&2; exit 2; }

if [ $DECODE_ONLY -eq 1 ] && [ -z "$DECODE_MODEL" ]; then
    echo "run_standard.sh: --decode-only needs --decode DIR" >&2; exit 2
fi
if [ $LLAMA_ONLY -eq 1 ] && [ -z "$LLAMA_MODEL" ]; then
    echo "run_standard.sh: --llama-only needs --llama DIR" >&2; exit 2
fi
if [ -n "$LLAMA_MODEL" ] && [ ! -f "$LLAMA_MODEL/model.safetensors" ]; then
    echo "run_standard.sh: --llama $LLAMA_MODEL: no model.safetensors there (make one with" >&2
    echo "  /usr/bin/python3 tests/models/make_tiny_llama.py --llama-1b $LLAMA_MODEL)" >&2
    exit 2
fi
if [ $GPT2_ONLY -eq 1 ] && [ -z "$GPT2_MODEL" ]; then
    echo "run_standard.sh: --gpt2-only needs --gpt2 DIR" >&2; exit 2
fi
# With any -only option, the rows run are the ones given with their -only.
ANY_ONLY=$((DECODE_ONLY | LLAMA_ONLY | GPT2_ONLY))
for row in "decode:$DECODE_MODEL:$DECODE_ONLY" "llama:$LLAMA_MODEL:$LLAMA_ONLY" "gpt2:$GPT2_MODEL:$GPT2_ONLY"; do
    IFS=: read -r name dir only <<<"$row"
    if [ $ANY_ONLY -eq 1 ] && [ -n "$dir" ] && [ "$only" -eq 0 ]; then
        echo "run_standard.sh: with an -only option, the rows run are those given with theirs (--$name DIR: give --$name-only too)" >&2
        exit 2
    fi
done
if [ -n "$GPT2_MODEL" ] && [ ! -f "$GPT2_MODEL/model.safetensors" ]; then
    echo "run_standard.sh: --gpt2 $GPT2_MODEL: no model.safetensors there (make one with" >&2
    echo "  /usr/bin/python3 tests/models/make_tiny_models.py --gpt2-small $GPT2_MODEL)" >&2
    exit 2
fi
if [ -n "$DECODE_MODEL" ] && [ ! -f "$DECODE_MODEL/model.safetensors" ]; then
    echo "run_standard.sh: --decode $DECODE_MODEL: no model.safetensors there (make one with" >&2
    echo "  /usr/bin/python3 tests/models/make_tiny_models.py --gpt2-small $DECODE_MODEL)" >&2
    exit 2
fi
if [ ! -x "$BIN" ]; then
    echo "run_standard.sh: no attntrace binary at $BIN. Build one first, e.g." >&2
    echo "  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && make -C build -j2 attntrace" >&2
    exit 2
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$PYTHON" ] || PYTHON=$(command -v python3 || true)
[ -n "$PYTHON" ] || { echo "run_standard.sh: python3 is needed to read the JSON and write the table" >&2; exit 2; }

TORCH_NOTE=""
if [ $USE_TORCH -eq 1 ]; then
    if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
        USE_TORCH=0
        TORCH_NOTE="PyTorch is not installed for $PYTHON (apt-get install python3-torch python3-numpy): only attntrace's figures were measured."
        echo "run_standard.sh: $TORCH_NOTE" >&2
    fi
else
    TORCH_NOTE="PyTorch was skipped (--no-torch)."
fi

[ -n "$RAW" ] || RAW=$(mktemp -d /tmp/attntrace-standard.XXXXXX)
mkdir -p "$RAW"

# OpenBLAS's core for the comparison columns (PyTorch's fp32 matmul and bench's
# cblas_sgemm column): the fastest of the cores the CPU can run that computes
# the run's products correctly (bench/openblas_cores.py). The caller's
# $OPENBLAS_CORETYPE is one of the candidates, kept only if it is that core.
CALLER_CORE=${OPENBLAS_CORETYPE:-}
CORE_ENV=""
echo "run_standard.sh: trying OpenBLAS's cores on the run's products (bench/openblas_cores.py, ~20 s)..." >&2
cores_rc=0
"$PYTHON" "$ROOT/bench/openblas_cores.py" >"$RAW/openblas-cores.json" || cores_rc=$?
CORE_CHOSEN=""
CORE_NOTE=$("$PYTHON" - "$RAW/openblas-cores.json" "$CALLER_CORE" <<'PY' 2>/dev/null || true
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    d = None
caller = sys.argv[2]
said = f"the caller had set OPENBLAS_CORETYPE={caller}" if caller else "the caller had not set OPENBLAS_CORETYPE"
if not d or not d.get("cores"):
    print("")
    print(f"bench/openblas_cores.py failed, so no core was tried: OpenBLAS ran the core it chose ({said}).")
    sys.exit(0)
if all(c["corename"] is None and "libopenblas" in c.get("note", "") and "cannot open" in c.get("note", "")
       for c in d["cores"]):
    print("")
    print("**OpenBLAS could not be loaded** (libopenblas.so.0 not found: libopenblas0-pthread is not installed), so "
          "no core was tried and PyTorch's fp32 matmul ran on the libblas.so.3 installed (Debian's reference BLAS "
          f"ran GPT-2's forward ~36x slower than OpenBLAS on one machine): its times are not a baseline ({said}).")
    sys.exit(0)
tried = []
for c in d["cores"]:
    if c["corename"] is None:
        tried.append(f"{c['asked']} failed")
        continue
    state = "correct" if c["correct"] else "wrong (" + ", ".join(c["wrong_products"]) + ")"
    if not c["taken"]:
        state = f"not taken (OpenBLAS ran {c['corename']})"
    mark = " (detected by OpenBLAS)" if c["asked"].lower() == (d["detected"] or "").lower() else ""
    tried.append(f"{c['asked']}{mark} {c['gflops_all']:.1f} GFLOP/s, {state}")
print(d["chosen"] or "")
head = (f"the comparison columns ran with OPENBLAS_CORETYPE={d['chosen']}, the fastest core that computed "
        f"correctly" if d["chosen"] else "no core computed correctly, so OpenBLAS ran the core it chose")
override = ""
if caller and d["chosen"] and caller.lower() != d["chosen"].lower():
    override = " (overridden for the comparison runs)"
print(f"{head}; {said}{override}. Tried by bench/openblas_cores.py, fp32 products of the run's shapes "
      f"(n = 512 projections, n = 2048 attention) on {d['threads']} thread, each entry checked against "
      f"float64 within the worst-case bound of a float32 sum of K products: " + "; ".join(tried) + "."
      + (f" Within 5% of the chosen core (the machine's noise): {', '.join(d['near'])}." if d.get("near") else ""))
PY
)
CORE_CHOSEN=$(printf '%s\n' "$CORE_NOTE" | sed -n 1p)
CORE_NOTE=$(printf '%s\n' "$CORE_NOTE" | sed -n '2,$p')
[ -n "$CORE_NOTE" ] || CORE_NOTE="bench/openblas_cores.py failed (exit status $cores_rc): OpenBLAS ran the core it chose."
[ -z "$CORE_CHOSEN" ] || CORE_ENV=" OPENBLAS_CORETYPE=$CORE_CHOSEN"
echo "run_standard.sh: OpenBLAS: $CORE_NOTE" >&2

: >"$RAW/commands.txt"
echo "${CALLER_CORE:+OPENBLAS_CORETYPE=$CALLER_CORE }$PYTHON bench/openblas_cores.py   # chose: ${CORE_CHOSEN:-none}" >>"$RAW/commands.txt"

avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
if [ "${avail_kb:-0}" -lt 3000000 ]; then
    echo "run_standard.sh: warning: only $((avail_kb / 1024)) MiB available; n = 2048 with the full trace needs ~1.4 GB" >&2
fi

start=$(date +%s)
echo "run_standard.sh: $BIN, raw results in $RAW" >&2
BLOCK_THREADS="${THREADS[*]}"
[ $ANY_ONLY -eq 0 ] || BLOCK_THREADS=""   # --decode-only, --llama-only, --gpt2-only: no block runs
for t in $BLOCK_THREADS; do
    for i in "${!TOKENS[@]}"; do
        n=${TOKENS[$i]}
        r=${REP[$i]}
        envs="OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t$CORE_ENV"
        [ $OURS_PASSIVE -eq 0 ] || envs="$envs OMP_WAIT_POLICY=PASSIVE"
        tenvs="OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t OMP_WAIT_POLICY=PASSIVE$CORE_ENV"
        cmd="attntrace --threads $t bench --tokens $n --d-model 768 --heads 12 --d-ff 3072 --mask none --activation relu --repeat $r --trace full --trace none --json"
        pcmd="$PYTHON bench/torch_layer.py --threads $t --tokens $n --repeat $r --warmup 2"
        echo "$envs $cmd" >>"$RAW/commands.txt"
        if [ $USE_TORCH -eq 1 ]; then
            echo "$tenvs $pcmd" >>"$RAW/commands.txt"
            echo "$tenvs $pcmd --keep-all" >>"$RAW/commands.txt"
            echo "$tenvs $pcmd --attention" >>"$RAW/commands.txt"
        fi
        # Each round: ours, then PyTorch right after (the noisy neighbours
        # change less between adjacent runs than across the whole script).
        for k in $(seq "$ROUNDS"); do
            echo "  n=$n threads=$t round $k/$ROUNDS: attntrace ($r repeats, trace full and none)..." >&2
            env $envs "$BIN" --threads "$t" bench --tokens "$n" --d-model 768 --heads 12 --d-ff 3072 \
                --mask none --activation relu --repeat "$r" --trace full --trace none --json >"$RAW/ours-n$n-t$t-r$k.json"
            if [ $USE_TORCH -eq 1 ]; then
                echo "  n=$n threads=$t round $k/$ROUNDS: PyTorch's layer, keeping every intermediate, attention alone ($r repeats each)..." >&2
                env $tenvs "$PYTHON" "$ROOT/bench/torch_layer.py" --threads "$t" --tokens "$n" --repeat "$r" \
                    --warmup 2 >"$RAW/torch-n$n-t$t-r$k.json"
                env $tenvs "$PYTHON" "$ROOT/bench/torch_layer.py" --threads "$t" --tokens "$n" --repeat "$r" \
                    --warmup 2 --keep-all >"$RAW/torch-keep-n$n-t$t-r$k.json"
                env $tenvs "$PYTHON" "$ROOT/bench/torch_layer.py" --threads "$t" --tokens "$n" --repeat "$r" \
                    --warmup 2 --attention >"$RAW/torch-attn-n$n-t$t-r$k.json"
            fi
        done
    done
done

# The decode row: for each thread count and round, the read bandwidth, then
# ours (decode of 64 ids and the run over them; bench --generate 32 after a
# 32-id prompt), then PyTorch's KV-cache loop right after.
seconds() {  # seconds OUT CMD...: CMD's wall time, its output to /dev/null
    local out=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' >"$out"
}
if [ -n "$DECODE_MODEL" ]; then
    DECODE_MODEL=$(cd "$DECODE_MODEL" && pwd)
    c++ -O3 -march=native -fopenmp -o "$RAW/read_bandwidth" "$ROOT/bench/read_bandwidth.cpp"
    vocab=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$DECODE_MODEL/config.json")
    ids64=$("$PYTHON" -c "print(','.join(str(5 + (i * 7919) % ($vocab - 5)) for i in range(64)))")
    ids32=$(echo "$ids64" | cut -d, -f1-32)
    echo "$ids64" >"$RAW/decode-ids.txt"
    for t in "${THREADS[@]}"; do
        envs="OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t OMP_WAIT_POLICY=PASSIVE$CORE_ENV"
        echo "$envs $RAW/read_bandwidth 1024 5" >>"$RAW/commands.txt"
        echo "$envs attntrace --threads $t decode --model $DECODE_MODEL --ids \$(cat decode-ids.txt)   # and run, the same ids" >>"$RAW/commands.txt"
        echo "$envs attntrace --threads $t bench --model $DECODE_MODEL --ids <its first 32> --generate 32 --json" >>"$RAW/commands.txt"
        echo "$envs $PYTHON bench/torch_decode.py --model $DECODE_MODEL --threads $t --tokens 64 --repeat 3" >>"$RAW/commands.txt"
        for k in $(seq "$ROUNDS"); do
            echo "  decode, threads=$t round $k/$ROUNDS: bandwidth, attntrace decode, run, bench --generate, PyTorch's loop..." >&2
            env $envs "$RAW/read_bandwidth" 1024 5 >"$RAW/bandwidth-t$t-r$k.json"
            seconds "$RAW/decode-t$t-r$k.s" env $envs "$BIN" --threads "$t" decode --model "$DECODE_MODEL" --ids "$ids64"
            seconds "$RAW/run-t$t-r$k.s" env $envs "$BIN" --threads "$t" run --model "$DECODE_MODEL" --ids "$ids64"
            env $envs "$BIN" --threads "$t" bench --model "$DECODE_MODEL" --ids "$ids32" --generate 32 --json \
                >"$RAW/generate-t$t-r$k.json"
            if [ $USE_TORCH -eq 1 ]; then
                env $envs "$PYTHON" "$ROOT/bench/torch_decode.py" --model "$DECODE_MODEL" --threads "$t" --tokens 64 \
                    --repeat 3 >"$RAW/torch-decode-t$t-r$k.json"
            fi
        done
    done
fi

# The GPT-2 trace row: one thread, 512 ids, the full trace; each round ours,
# then PyTorch keeping every intermediate right after. PyTorch's logits are
# checked each round against ours, exported once before the rounds.
if [ -n "$GPT2_MODEL" ]; then
    GPT2_MODEL=$(cd "$GPT2_MODEL" && pwd)
    vocab=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$GPT2_MODEL/config.json")
    ids512=$("$PYTHON" -c "print(','.join(str(5 + (i * 7919) % ($vocab - 5)) for i in range(512)))")
    echo "$ids512" >"$RAW/gpt2-ids.txt"
    envs="OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE$CORE_ENV"
    echo "$envs attntrace --threads 1 bench --model $GPT2_MODEL --ids \$(cat gpt2-ids.txt) --trace full --repeat 5 --json" >>"$RAW/commands.txt"
    if [ $USE_TORCH -eq 1 ]; then
        echo "$envs attntrace --threads 1 export --model $GPT2_MODEL --ids \$(cat gpt2-ids.txt) --trace unembed --npy gpt2-logits   # once" >>"$RAW/commands.txt"
        echo "$envs $PYTHON bench/torch_gpt2_trace.py --model $GPT2_MODEL --threads 1 --ids-file gpt2-ids.txt --check-logits gpt2-logits/unembed.npy --repeat 5 --warmup 1" >>"$RAW/commands.txt"
        echo "  GPT-2 trace row: our logits for PyTorch's check (export --trace unembed --npy)..." >&2
        env $envs "$BIN" --threads 1 export --model "$GPT2_MODEL" --ids "$ids512" --trace unembed --npy "$RAW/gpt2-logits" >/dev/null
    fi
    for k in $(seq "$ROUNDS"); do
        echo "  GPT-2 trace row, round $k/$ROUNDS: bench --trace full (5 repeats), PyTorch keeping every intermediate (5)..." >&2
        env $envs "$BIN" --threads 1 bench --model "$GPT2_MODEL" --ids "$ids512" --trace full --repeat 5 --json \
            >"$RAW/gpt2-bench-r$k.json"
        if [ $USE_TORCH -eq 1 ]; then
            env $envs "$PYTHON" "$ROOT/bench/torch_gpt2_trace.py" --model "$GPT2_MODEL" --threads 1 \
                --ids-file "$RAW/gpt2-ids.txt" --check-logits "$RAW/gpt2-logits/unembed.npy" --repeat 5 --warmup 1 \
                >"$RAW/torch-gpt2-r$k.json" || echo "run_standard.sh: bench/torch_gpt2_trace.py failed (round $k): see $RAW/torch-gpt2-r$k.json" >&2
        fi
    done
fi

# The Llama-1B row: one thread, each round bench's stack against the FMA peak
# it measures, then run's peak memory over the same ids, then PyTorch's
# forward over them (its logits checked against ours, exported once).
if [ -n "$LLAMA_MODEL" ]; then
    LLAMA_MODEL=$(cd "$LLAMA_MODEL" && pwd)
    vocab=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$LLAMA_MODEL/config.json")
    ids256=$("$PYTHON" -c "print(','.join(str(13 + (i * 7919) % ($vocab - 13)) for i in range(256)))")
    echo "$ids256" >"$RAW/llama-ids.txt"
    envs="OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE$CORE_ENV"
    echo "$envs attntrace --threads 1 bench --model $LLAMA_MODEL --ids \$(cat llama-ids.txt) --trace summary --repeat 3 --json" >>"$RAW/commands.txt"
    echo "$envs /usr/bin/time -v attntrace --threads 1 run --model $LLAMA_MODEL --ids \$(cat llama-ids.txt) --trace summary" >>"$RAW/commands.txt"
    if [ $USE_TORCH -eq 1 ]; then
        echo "$envs attntrace --threads 1 export --model $LLAMA_MODEL --ids \$(cat llama-ids.txt) --trace unembed --npy llama-logits   # once" >>"$RAW/commands.txt"
        echo "$envs $PYTHON bench/torch_llama_forward.py --model $LLAMA_MODEL --threads 1 --ids-file llama-ids.txt --check-logits llama-logits/unembed.npy --repeat 3 --warmup 1" >>"$RAW/commands.txt"
        echo "  Llama-1B: our logits for PyTorch's check (export --trace unembed --npy)..." >&2
        env $envs "$BIN" --threads 1 export --model "$LLAMA_MODEL" --ids "$ids256" --trace unembed --npy "$RAW/llama-logits" >/dev/null
    fi
    for k in $(seq "$ROUNDS"); do
        echo "  Llama-1B, round $k/$ROUNDS: bench (3 repeats), run's peak memory..." >&2
        env $envs "$BIN" --threads 1 bench --model "$LLAMA_MODEL" --ids "$ids256" --trace summary --repeat 3 --json \
            >"$RAW/llama-bench-r$k.json"
        if [ -x /usr/bin/time ]; then
            env $envs /usr/bin/time -v "$BIN" --threads 1 run --model "$LLAMA_MODEL" --ids "$ids256" --trace summary \
                >/dev/null 2>"$RAW/llama-run-r$k.time"
        fi
        if [ $USE_TORCH -eq 1 ]; then
            echo "  Llama-1B, round $k/$ROUNDS: PyTorch's forward (bf16 widened to float32 first; 3 repeats)..." >&2
            env $envs "$PYTHON" "$ROOT/bench/torch_llama_forward.py" --model "$LLAMA_MODEL" --threads 1 \
                --ids-file "$RAW/llama-ids.txt" --check-logits "$RAW/llama-logits/unembed.npy" --repeat 3 --warmup 1 \
                >"$RAW/torch-llama-r$k.json" || echo "run_standard.sh: bench/torch_llama_forward.py failed (round $k): see $RAW/torch-llama-r$k.json" >&2
        fi
    done
fi
elapsed=$(($(date +%s) - start))

# Machine and versions, for the record.
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "elapsed=$elapsed"
    echo "model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
    echo "cpus=$(nproc)"
    echo "cores_per_socket=$(lscpu 2>/dev/null | sed -n 's/^Core(s) per socket: *//p' | head -1)"
    echo "sockets=$(lscpu 2>/dev/null | sed -n 's/^Socket(s): *//p' | head -1)"
    echo "threads_per_core=$(lscpu 2>/dev/null | sed -n 's/^Thread(s) per core: *//p' | head -1)"
    echo "l1d=$(lscpu 2>/dev/null | sed -n 's/^L1d cache: *//p' | head -1)"
    echo "l2=$(lscpu 2>/dev/null | sed -n 's/^L2 cache: *//p' | head -1)"
    echo "hypervisor=$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor: *//p' | head -1)"
    echo "os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "kernel=$(uname -r)"
    echo "mem=$(free -g 2>/dev/null | awk '/^Mem:/ {print $2 " GiB"}')"
    echo "version=$("$BIN" --version 2>/dev/null | head -1)"
    echo "commit=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "openblas=$(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || true)"
    echo "torch_pkg=$(dpkg-query -W -f='${Version}' python3-torch 2>/dev/null || true)"
    echo "bin=$BIN"
    echo "python=$PYTHON"
    echo "torch_note=$TORCH_NOTE"
    echo "core_note=$CORE_NOTE"
    echo "repeats=${REPEATS}"
    echo "rounds=${ROUNDS}"
    echo "ours_passive=$OURS_PASSIVE"
    echo "decode_model=$DECODE_MODEL"
    echo "decode_only=$DECODE_ONLY"
    echo "llama_model=$LLAMA_MODEL"
    echo "llama_only=$LLAMA_ONLY"
    echo "gpt2_model=$GPT2_MODEL"
    echo "gpt2_only=$GPT2_ONLY"
} >"$RAW/machine.txt"

"$PYTHON" - "$RAW" "$OUT" "$PRINT_ONLY" <<'PY'
import json, os, re, sys

raw, out, print_only = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
m = {}
for line in open(os.path.join(raw, "machine.txt")):
    k, _, v = line.rstrip("\n").partition("=")
    m[k] = v
commands = [l.rstrip("\n") for l in open(os.path.join(raw, "commands.txt")) if l.strip()]
tokens, threads = (128, 512, 2048), (1, 2)
products = ("qkv", "ffn", "out", "scores", "mix")


rounds = int(m.get("rounds", "1"))


def decode_section():
    """The decode row (--decode DIR): ms per token, ours against PyTorch's KV-cache loop and the memory limit."""
    model = m.get("decode_model")
    if not model:
        return []
    import struct
    with open(os.path.join(model, "model.safetensors"), "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    sizes = {k: v["data_offsets"][1] - v["data_offsets"][0] for k, v in header.items() if k != "__metadata__"}
    # A token reads every weight once (the tied unembedding reads the whole embedding table) but
    # the position table, of which it reads one row.
    weight_bytes = sum(b for k, b in sizes.items() if not k.endswith("wpe.weight"))

    def seconds(name):
        try:
            return float(open(os.path.join(raw, name)).read())
        except (OSError, ValueError):
            return None

    def mid(xs):
        x = med(xs)
        return "-" if x is None else f"{x:.1f}"

    per, rows = {}, []
    for t in (1, 2):
        rs = []
        for k in range(1, rounds + 1):
            bw = load(os.path.join(raw, f"bandwidth-t{t}-r{k}.json"))
            tdoc = load(os.path.join(raw, f"torch-decode-t{t}-r{k}.json"))
            gdoc = load(os.path.join(raw, f"generate-t{t}-r{k}.json"))
            win = sorted(gdoc["window_s"][1:gdoc["prompt_tokens"]]) if gdoc else []
            r = {"bw": bw["median_gb_per_s"] if bw else None,
                 "decode_s": seconds(f"decode-t{t}-r{k}.s"), "run_s": seconds(f"run-t{t}-r{k}.s"),
                 "prompt": med(win) * 1e3 if win else None,
                 "gen": gdoc["generated_median_s"] * 1e3 if gdoc else None,
                 "torch": tdoc.get("ms_per_token") if tdoc else None}
            r["limit"] = weight_bytes / (r["bw"] * 1e9) * 1e3 if r["bw"] else None
            rs.append(r)
        per[t] = rs
        rows.append(f"| {t} | {mid([r['gen'] for r in rs])} | {mid([r['prompt'] for r in rs])} | "
                    f"{mid([r['torch'] for r in rs])} | {fmt2(med(ratio(rs, 'gen', 'torch')))} | "
                    f"{mid([r['bw'] for r in rs])} | {mid([r['limit'] for r in rs])} | "
                    f"{fmt2(med(ratio(rs, 'gen', 'limit')))} | {fmt2(med([r['decode_s'] for r in rs]))} / "
                    f"{fmt2(med([r['run_s'] for r in rs]))} |")
    targets = [f"| generated token / PyTorch's loop ≤ 0.7 | " + " | ".join(verdict(ratio(per[t], "gen", "torch"), 0.7) for t in (1, 2)) + " |",
               f"| generated token / memory limit ≤ 1.5 | " + " | ".join(verdict(ratio(per[t], "gen", "limit"), 1.5) for t in (1, 2)) + " |"]
    one, two = med([r["gen"] for r in per[1]]), med([r["gen"] for r in per[2]])
    targets.append("| two threads against one, generated token (median ms) ≥ 1.6 | "
                   + (f"{one / two:.2f}: {'met' if one / two >= 1.6 else '**not met**'}" if one and two else "-") + " | |")
    L = ["### Decode (GPT-2-small-sized, F32)", "",
         f"`{model}` (tests/models/make_tiny_models.py --gpt2-small: 12 blocks, d_model 768, 12 heads, vocabulary "
         f"50257, random weights): a token reads {weight_bytes / 1e6:.0f} MB of weights (every tensor once, the tied "
         "unembedding the whole embedding table, one row of the positions). Ours: `bench --model DIR --ids (the "
         "first 32 ids) --generate 32`, every window of `decode --generate` timed in the process: the median "
         "of the 32 generated tokens (each: its embedding row, one row through every block against the caches, "
         "the logits, the argmax, the report's row) and of the prompt's windows after the first (the first "
         "converts the weights the decode holds); and, whole commands, `decode --ids` of the 64 ids (each "
         "step checked against its row of the causal run) beside `run` over them. PyTorch: `bench/torch_decode.py`, GPT-2 in "
         "plain PyTorch, one token at a time with preallocated K/V caches written in place (64 ids, median of 3 "
         "loops). Memory limit: the weights' bytes over the read bandwidth measured just before "
         "(`bench/read_bandwidth.cpp`: a streaming sum over 1 GiB on that many threads, median of 5).", "",
         "| threads | ours, generated token, ms | ours, prompt window, ms | PyTorch loop, ms/token | "
         "generated / PyTorch | read bandwidth, GB/s | memory limit, ms/token | generated / limit | "
         "decode (checked) / run over 64 ids, s |",
         "|---|---|---|---|---|---|---|---|---|"] + rows + [
         "", "Medians over the rounds; ratios taken within each round, then the median. Targets (issue 34):", "",
         "| target | one thread | two threads |", "|---|---|---|"] + targets + [""]
    return L


def torch_check(doc):
    """bench/torch_*.py's logit check, in words."""
    if not doc:
        return "did not run"
    c = doc.get("check")
    if doc.get("error"):
        return f"**failed**: {doc['error']}" + (f" (max |diff| {c['max_abs_logit_diff']:.3g})" if c else "")
    if not c:
        return "not checked"
    return (f"max |diff| {c['max_abs_logit_diff']:.2g} against a tolerance of {c['tolerance']:.2g} "
            f"({c['tolerance_rule']}; the largest |logit| {c['max_abs_logit']:.3g})")


def gpt2_section():
    """The GPT-2 trace row (--gpt2 DIR): the stack with the full trace against PyTorch keeping every intermediate."""
    model = m.get("gpt2_model")
    if not model:
        return []
    rows, rs, checks, kept = [], [], [], None
    for k in range(1, rounds + 1):
        doc, tdoc = load(os.path.join(raw, f"gpt2-bench-r{k}.json")), load(os.path.join(raw, f"torch-gpt2-r{k}.json"))
        if not doc:
            continue
        run = doc["runs"][0]
        st = {s["stage"]: s for s in run["stages"]}
        trun = first_run(tdoc)
        r = {"ours": st["block"]["median_s"] * 1e3, "ours_min": st["block"]["min_s"] * 1e3,
             "torch": trun["median_s"] * 1e3 if trun else None, "torch_min": trun["min_s"] * 1e3 if trun else None,
             "peak": doc["fma_peak_gflops"], "est_mib": run["estimated_peak_bytes"] / 2**20}
        rs.append(r)
        checks.append(torch_check(tdoc))
        if tdoc and tdoc.get("kept_bytes"):
            kept = (tdoc["kept_tensors"], tdoc["kept_bytes"] / 2**20)
        rows.append(f"| {k} | {r['ours']:.1f} ({r['ours_min']:.1f}) | "
                    + (f"{r['torch']:.1f} ({r['torch_min']:.1f}) | {r['ours'] / r['torch']:.2f}" if r["torch"] else "- | -")
                    + f" | {r['peak']:.0f} |")
    if not rs:
        return []
    ratios = ratio(rs, "ours", "torch")
    rows.append(f"| median | {med([r['ours'] for r in rs]):.1f} | "
                + (f"{med([r['torch'] for r in rs if r['torch']]):.1f}" if ratios else "-")
                + f" | {spread(ratios) if ratios else '-'} | {med([r['peak'] for r in rs]):.0f} |")
    same = len(set(checks)) == 1
    return ["### GPT-2-small-sized forward with the full trace (one thread)", "",
            f"`{model}` (tests/models/make_tiny_models.py --gpt2-small: 12 blocks, d_model 768, 12 heads, d_ff "
            "3072, vocabulary 50257, F32, random weights), 512 ids (`5 + (i·7919) mod 50252`), one thread. Ours: "
            "`bench --model DIR --ids (512 ids) --trace full --repeat 5`, the stack (bench's `block` row: "
            "the embeddings, every block, the final norm and the tied unembedding) recording every step, "
            f"median of 5 after a warm-up; bench's estimated peak {med([r['est_mib'] for r in rs]):.0f} MiB. "
            "PyTorch: `bench/torch_gpt2_trace.py`, GPT-2's forward in plain PyTorch over the same safetensors "
            "(LayerNorm, Q, K and V as three products, causal attention, c_proj, GELU (tanh) FFN, final norm, "
            "tied unembedding) keeping every intermediate under TransformerLens' hook names as `run_with_cache` "
            "would"
            + (f" ({kept[0]} tensors, {kept[1]:.0f} MiB)" if kept else "")
            + ", under `torch.no_grad()`, median of 5 after a warm-up. Its logits were checked against ours "
            "(`export --trace unembed --npy`) before timing: "
            + ("; ".join(checks) if not same else checks[0] + (" (each round)" if len(checks) > 1 else "")) + ".", "",
            "| round | ours, stack with the full trace, ms (min) | PyTorch keeping every intermediate, ms (min) | "
            "ours / PyTorch | FMA peak, GFLOP/s |",
            "|---|---|---|---|---|"] + rows + [
            "", "Each round: ours, then PyTorch right after; the ratio is taken within the round, then the median "
            "over the rounds (their range in brackets; below 1: ours is faster). The FMA peak is bench's, measured "
            "at the start of its run (a low figure means the neighbours were busy).", ""]


def llama_section():
    """The Llama-1B row (--llama DIR): the stack on one thread against the FMA limit, and run's peak memory."""
    model = m.get("llama_model")
    if not model:
        return []
    rs = []
    for k in range(1, rounds + 1):
        doc = load(os.path.join(raw, f"llama-bench-r{k}.json"))
        rss = None
        try:
            for line in open(os.path.join(raw, f"llama-run-r{k}.time")):
                if "Maximum resident set size" in line:
                    rss = int(line.split(":")[1]) * 1024
        except (OSError, ValueError):
            pass
        if not doc:
            continue
        tdoc = load(os.path.join(raw, f"torch-llama-r{k}.json"))
        trun = first_run(tdoc)
        st = {s["stage"]: s for s in doc["runs"][0]["stages"]}
        block, peak = st["block"], doc["fma_peak_gflops"]
        limit = block["flops"] / (peak * 1e9)
        rs.append({"ms": block["median_s"] * 1e3, "gflops": block["flops"] / block["median_s"] / 1e9, "peak": peak,
                   "of_peak": block["flops"] / block["median_s"] / 1e9 / peak, "limit": limit * 1e3,
                   "ratio": block["median_s"] / limit, "ffn": st["ffn"]["median_s"] * 1e3, "rss": rss,
                   "est_mib": doc["runs"][0]["estimated_peak_bytes"] / 2**20,
                   "torch": trun["median_s"] * 1e3 if trun else None, "check": torch_check(tdoc) if tdoc else None})
    if not rs:
        return []

    def mid(key, f="{:.1f}"):
        x = med([r[key] for r in rs if r[key] is not None])
        return "-" if x is None else f.format(x)

    rss = med([r["rss"] for r in rs if r["rss"]])
    ratios = [r["ratio"] for r in rs]
    vs_torch = ratio(rs, "ms", "torch")
    checks = [r["check"] for r in rs if r["check"]]
    torch_text = []
    if any(r["torch"] for r in rs) or checks:
        torch_text = [
            "PyTorch: `bench/torch_llama_forward.py`, Llama's forward in plain PyTorch over the same safetensors "
            "(RMSNorm, RoPE in the half layout, grouped-query attention, SwiGLU, untied lm_head; logits of every "
            "position), under `torch.no_grad()`, median of 3 after a warm-up. **Its bf16 weights are widened to "
            "float32 once, before timing** (torch 1.13's CPU bf16 matmul is far slower than its fp32 one, which "
            "goes to OpenBLAS): PyTorch's forward is float32 on the same values, while ours reads the bf16 weights "
            "as stored and widens them inside its GEMM's packing, so our time includes the widening and PyTorch's "
            "does not. Its logits were checked against ours (`export --trace unembed --npy`) before timing: "
            + ("; ".join(checks) if len(set(checks)) > 1 else (checks[0] + (" (each round)" if len(checks) > 1 else "")))
            + ". Ours / PyTorch per round: "
            + (", ".join(f"{r['ms'] / r['torch']:.2f}" for r in rs if r["torch"]) or "-")
            + " (the ratio within each round: ours, then PyTorch right after).", ""]
    return ["### Llama-1B-sized BF16 forward (one thread)", "",
            f"`{model}` (tests/models/make_tiny_llama.py --llama-1b: 16 blocks, d_model 2048, 32 heads, 8 K/V heads, "
            "d_ff 8192, vocabulary 32000, BF16, random weights), 256 ids, one thread: `bench --model DIR --ids (256 "
            "ids) --trace summary --repeat 3`, the stack (bench's `block` row: every block, the final norm and the "
            "unembedding) against the FMA limit, its FLOPs at the FMA peak bench measured in the same process; "
            "and `run`'s peak memory over the same ids (/usr/bin/time -v).", "",
            ] + torch_text + [
            "| stack, ms | GFLOP/s | FMA peak, GFLOP/s | % of peak | FMA limit, ms | stack / limit | FFN, ms | "
            "peak memory (run), MiB | estimated peak (bench), MiB | PyTorch forward, ms | stack / PyTorch |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            f"| {mid('ms')} | {mid('gflops')} | {mid('peak')} | {mid('of_peak', '{:.0%}')} | {mid('limit')} | "
            f"{fmt2(med(ratios))} | {mid('ffn')} | {'-' if rss is None else f'{rss / 2**20:.0f}'} | "
            f"{mid('est_mib', '{:.0f}')} | {mid('torch')} | "
            + (spread(vs_torch) if vs_torch else "-") + " |",
            "", "Medians over the rounds (stack / PyTorch: the median of the ratios taken within each round, their "
            "range in brackets). Targets (issue 34):", "",
            "| target | result |", "|---|---|",
            f"| stack / FMA limit ≤ 1.35 (≥ 75% of the peak) | {verdict(ratios, 1.35)} |",
            f"| peak memory ≤ 1.2 GB | " + ("-" if rss is None else
                                           f"{rss / 1e9:.2f} GB: {'met' if rss <= 1.2e9 else '**not met**'}") + " |", ""]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ms(s):
    return f"{1e3 * s:.1f}"


def med(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    h = len(xs) // 2
    return xs[h] if len(xs) % 2 else (xs[h - 1] + xs[h]) / 2


def fmt2(x):
    return "-" if x is None else f"{x:.2f}"


def spread(xs):
    """The median of xs, their range in brackets when there are several."""
    return f"{med(xs):.2f}" + (f" ({min(xs):.2f}-{max(xs):.2f})" if len(xs) > 1 else "")


def stages(run):
    return {s["stage"]: s for s in run["stages"]}


def first_run(doc):
    return doc["runs"][0] if doc and doc.get("runs") else None


# Per (n, threads): each round's figures; ratios are taken within a round.
cells, torch_version, torch_env = {}, None, None
for t in threads:
    for n in tokens:
        rs = []
        for k in range(1, rounds + 1):
            ours = load(os.path.join(raw, f"ours-n{n}-t{t}-r{k}.json"))
            if ours is None:
                continue
            runs = {r["trace"]: r for r in ours.get("runs", [])}
            st = stages(ours)
            torch, keep = first_run(load(os.path.join(raw, f"torch-n{n}-t{t}-r{k}.json"))), first_run(
                load(os.path.join(raw, f"torch-keep-n{n}-t{t}-r{k}.json")))
            tatt = first_run(load(os.path.join(raw, f"torch-attn-n{n}-t{t}-r{k}.json")))
            nst = stages(runs["none"]) if "none" in runs else None
            full, none = st["block"]["median_s"], nst["block"]["median_s"] if nst else None
            rs.append({
                "ours": ours, "st": st, "nst": nst, "runs": runs, "full": full, "full_min": st["block"]["min_s"],
                "none": none, "torch": torch["median_s"] if torch else None, "torch_min": torch["min_s"] if torch else None,
                "keep": keep["median_s"] if keep else None, "tatt": tatt["median_s"] if tatt else None,
                "attn": nst["mix"]["median_s"] if nst else None,
            })
            if load(os.path.join(raw, f"torch-n{n}-t{t}-r{k}.json")):
                doc = load(os.path.join(raw, f"torch-n{n}-t{t}-r{k}.json"))
                torch_version, torch_env = doc["torch"], doc["env"]
        cells[(n, t)] = rs


def ratio(rs, a, b):
    """The per-round ratios a / b (both present)."""
    return [r[a] / r[b] for r in rs if r.get(a) and r.get(b)]


def blas(rs, p):
    out = []
    for r in rs:
        s = r["st"].get(p, {})
        k, b = s.get("kernel_median_s"), s.get("openblas_median_s")
        if k and b:
            out.append(b / k)
    return out


rows, detail, policy_rows = [], [], []
for t in threads:
    for n in tokens:
        rs = cells[(n, t)]
        if not rs:
            rows.append(f"| {n} | {t} | (failed) |" + " |" * 16)
            continue
        full, none = med([r["full"] for r in rs]), med([r["none"] for r in rs])
        pt, kp = med([r["torch"] for r in rs]), med([r["keep"] for r in rs])
        cells_b = [fmt2(med(blas(rs, p))) for p in products]
        rows.append(
            f"| {n} | {t} | {ms(full)} ({ms(min(r['full_min'] for r in rs))}) | {ms(none) if none else '-'} | "
            + (f"{ms(pt)} ({ms(min(r['torch_min'] for r in rs if r['torch_min']))})" if pt else "-")
            + f" | {ms(kp) if kp else '-'} | {fmt2(med(ratio(rs, 'full', 'torch')))} | {fmt2(med(ratio(rs, 'full', 'keep')))} | "
            f"{fmt2(med(ratio(rs, 'none', 'torch')))} | {fmt2(med(ratio(rs, 'full', 'none')))} | " + " | ".join(cells_b)
            + f" | {med([r['ours']['fma_peak_gflops'] for r in rs]):.0f} | "
            f"{med([r['ours'].get('micro_kernel_gflops', 0) for r in rs]):.0f} |")
        # Where the block's time goes: products in the block against the same
        # products alone, the element-wise attention stages, the sum of stages
        # (each a median over the rounds).
        def stage_med(name, key="median_s"):
            return med([r["st"][name].get(key) for r in rs if name in r["st"]])
        ssum = med([sum(s["median_s"] for s in r["ours"]["stages"] if s["stage"] != "block") for r in rs])
        inblock = []
        for p in products:
            k = stage_med(p, "kernel_median_s")
            inblock.append(f"{ms(stage_med(p))} / {ms(k)}" if k else "-")
        elem = med([sum(r["st"][x]["median_s"] for x in ("scale", "mask", "softmax") if x in r["st"]) for r in rs])
        if none:
            attn, tatt = med([r["attn"] for r in rs]), med([r["tatt"] for r in rs])
            r0 = rs[0]["runs"]
            policy_rows.append(
                f"| {n} | {t} | {ms(full)} | {ms(none)} | {med(ratio(rs, 'full', 'none')):.3f} | "
                f"{r0['full']['estimated_peak_bytes'] / 2**20:.0f} / {r0['none']['estimated_peak_bytes'] / 2**20:.0f} | "
                f"{ms(attn)} | {ms(tatt) if tatt else '-'} | {fmt2(med(ratio(rs, 'attn', 'tatt')))} |")
        detail.append(f"| {n} | {t} | {ms(full)} | {ms(ssum)} | " + " | ".join(inblock) + f" | {ms(elem)} |")


# Issue 16's targets, each read from the median over the rounds, with the rounds' range.
def verdict(xs, limit, at_least=False):
    x = med(xs)
    if x is None:
        return "-"
    spread = f" ({min(xs):.2f}-{max(xs):.2f})" if len(xs) > 1 else ""
    ok = x >= limit if at_least else x <= limit
    return f"{x:.2f}{spread}: {'met' if ok else '**not met**'}"


if "1" in (m.get("decode_only"), m.get("llama_only"), m.get("gpt2_only")):
    only = ((decode_section() if m.get("decode_only") == "1" else [])
            + (gpt2_section() if m.get("gpt2_only") == "1" else [])
            + (llama_section() if m.get("llama_only") == "1" else []))
    head = [f"Run by `bench/run_standard.sh` on {m['date']} ({int(m['elapsed']) // 60} min {int(m['elapsed']) % 60} s). "
            f"Machine: {m['model']}, {m['cpus']} CPUs, {m['os']}. {m['version']} (commit {m['commit']}). "
            f"OpenBLAS's core for PyTorch's fp32 matmul: {m.get('core_note', '')}", ""]
    sys.stdout.write("\n".join(head + only + ["Commands:", "", "```sh"] + commands + ["```"]) + "\n")
    sys.exit(0)


targets = []
for label, a, b, n, limit in (("full / PyTorch layer", "full", "torch", 512, "0.9"),
                              ("full / PyTorch layer", "full", "torch", 2048, "1.0"),
                              ("full / PyTorch keeping every intermediate", "full", "keep", 2048, "0.6"),
                              ("full / none", "full", "none", 512, "1.10"),
                              ("full / none", "full", "none", 2048, "1.25"),
                              ("none / PyTorch layer", "none", "torch", 512, "0.8"),
                              ("none / PyTorch layer", "none", "torch", 2048, "0.6")):
    targets.append(f"| {label} ≤ {limit} at n = {n} | "
                   + " | ".join(verdict(ratio(cells[(n, t)], a, b), float(limit)) for t in threads) + " |")
gemm = []
for t in threads:
    per = [(med(blas(cells[(n, t)], p)), p, n) for n in tokens for p in products if blas(cells[(n, t)], p)]
    if per:
        low = min(per)
        ok = low[0] >= 1.0
        gemm.append(f"{low[0]:.2f} ({low[1]} at n = {low[2]}) to {max(per)[0]:.2f}: {'met' if ok else '**not met**'}")
    else:
        gemm.append("-")
targets.append("| our GEMM ≥ 1.0x `cblas_sgemm`, every product (lowest to highest median) | " + " | ".join(gemm) + " |")
scal = []
for n, limit in ((512, 1.6), (2048, 1.8)):
    one, two = med([r["none"] for r in cells[(n, 1)]]), med([r["none"] for r in cells[(n, 2)]])
    scal.append(f"{one / two:.2f} at n = {n} (≥ {limit}): {'met' if one / two >= limit else '**not met**'}"
                if one and two else "-")
targets.append("| two threads against one, `--trace none` (median block times) | " + "; ".join(scal) + " | |")

L = []
L.append("## Standard run")
L.append("")
L.append(f"Written by `bench/run_standard.sh` on {m['date']} (the script took "
         f"{int(m['elapsed']) // 60} min {int(m['elapsed']) % 60} s). Machine: {m['model']}, "
         f"{m['cpus']} CPUs ({m['sockets']} socket x {m['cores_per_socket']} cores, "
         f"{m['threads_per_core']} thread per core; L1d {m['l1d']}, L2 {m['l2']}), "
         f"{m['hypervisor'] + ' guest, ' if m['hypervisor'] else ''}{m['mem']}, {m['os']}, Linux {m['kernel']}. "
         f"{m['version']} (commit {m['commit']}), kernels "
         f"{cells[(128, 1)][0]['ours']['kernels'] if cells[(128, 1)] else '?'}"
         f", OpenBLAS {m['openblas'] or '?'} (pthread; its core: below)"
         + (f", PyTorch {torch_version}"
            + (f" (Debian python3-torch {m['torch_pkg']})" if m.get('torch_pkg') else "")
            + f" run by {m['python']}." if torch_version else "."))
L.append("")
L.append("Block: d_model 768, 12 heads, d_ff 3072, no mask, ReLU, post-norm (PyTorch's "
         "`norm_first=False`), batch 1, float32. Ours records the full trace (`--trace full`) and nothing "
         "(`--trace none`), interleaved in one run. "
         "PyTorch: `nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, batch_first=True).eval()` "
         "under `torch.no_grad()` on a (1, n, 768) input (`bench/torch_layer.py`), and the same layer step by "
         "step keeping every intermediate as TransformerLens' `run_with_cache` would (`--keep-all`: q, k, v, "
         "scores, pattern, z, attn_out, resid_mid, both norms' scale and output, the MLP's pre, post and out). "
         f"Timed runs per n = 128, 512, 2048: {m['repeats']}, after 1 warm-up (ours) or 2 (PyTorch); "
         f"{rounds} round(s) of each.")
L.append("")
ours_env = "`OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N" + (" OMP_WAIT_POLICY=PASSIVE`" if m["ours_passive"] == "1"
                                                           else "` (libgomp's default wait policy)")
L.append("Threads, for N of them: PyTorch ran with `OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N "
         "OMP_WAIT_POLICY=PASSIVE` and `torch.set_num_threads(N)` (Debian's torch sends fp32 matmul to OpenBLAS, "
         "whose pool `torch.set_num_threads` does not set; without these the two pools fight over the cores); "
         f"attntrace with {ours_env} and `--threads N`. "
         + ("Each attntrace run was followed at once by PyTorch's on the same n and threads; each ratio is taken "
            "within a round, and the tables give the median over the rounds (times too). " if torch_version else "")
         + "The machine is shared and noisy: compare the ratios (taken within one run or two adjacent ones), "
         "not the times across rows.")
L.append("")
L.append("OpenBLAS's core (PyTorch's fp32 matmul and bench's `cblas_sgemm` column; attntrace's own kernels "
         f"do not use OpenBLAS): {m.get('core_note', '')}")
if m.get("torch_note"):
    L.append("")
    L.append(f"**{m['torch_note']}**")
L.append("")
L.append("| n | threads | ours full, ms (min) | ours none, ms | PyTorch layer, ms (min) | PyTorch keep-all, ms | "
         "full / PyTorch | full / keep-all | none / PyTorch | full / none | "
         "qkv BLAS/ours | ffn BLAS/ours | out BLAS/ours | scores BLAS/ours | mix BLAS/ours | FMA peak GFLOP/s | micro-kernel GFLOP/s |")
L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
L.extend(rows)
L.append("")
L.append("Medians over the rounds of each run's median (minimum of all in brackets). Ratios: each round's "
         "median over median, then the median over the rounds (below 1: ours is faster). Targets "
         "(issue 16): full / PyTorch at most 0.9 at n = 512 and 1.0 at n = 2048; full / keep-all at most 0.6 at "
         "n = 2048; none / PyTorch at most 0.8 at n = 512 and 0.6 at n = 2048; full / none at most 1.10 at "
         "n = 512 and 1.25 at n = 2048; each on one thread and on two. "
         "BLAS/ours: each stage's matrix products alone on warm buffers, OpenBLAS's `cblas_sgemm` median "
         "time over our kernels' (`openblas_median_s / kernel_median_s`; above 1: ours is faster; targets for "
         "every product: at least 1.0, on one thread and on two). FMA peak: measured by attntrace at the "
         "start of that row's run, on that many threads (a low figure means the neighbours were busy). "
         "Micro-kernel: the GEMM's register tile alone over packed blocks in cache, one thread, at the "
         "blocking's kc (`attntrace bench` prints it): what the products could reach without packing and C.")
L.append("")
L.append("### Issue 16's targets (same runs)")
L.append("")
L.append("| target | one thread | two threads |")
L.append("|---|---|---|")
L.extend(targets)
L.append("")
L.append(f"Each cell: the median over the {rounds} round(s) of the ratio taken within a round, the rounds' "
         "range in brackets, and whether the median meets the target.")
L.append("")
L.append("### Trace cost and attention alone (same runs)")
L.append("")
L.append("| n | threads | block, trace full, ms | block, trace none, ms | full / none | estimated peak MiB, full / none | "
         "attention streamed (attn*), ms | PyTorch attention alone, ms | ours / PyTorch |")
L.append("|---|---|---|---|---|---|---|---|---|")
L.extend(policy_rows)
L.append("")
L.append("Trace none keeps only the block's output: attention streams over key blocks (scores, scale, mask, "
         "softmax and mix fused; no n x n matrix) and the FFN runs up to 12 MiB of hidden units (1024 rows at d_ff 3072) at a time. The two policies ran "
         "interleaved in one `attntrace bench` (the full trace keeps the raw scores and the weights; the scaled, "
         "masked, shifted and exp'd scores are derived steps, computed when read, and the softmax pass computes "
         "the raw scores, the weights and Z together a row block at a time: docs/performance.md). Issue 3's "
         "target for attention alone: "
         "at most 0.3x PyTorch's at n = 2048 on one thread. PyTorch attention alone: "
         "`torch.matmul`, `torch.softmax` on (1, 12, n, 64) (`bench/torch_layer.py --attention`).")
L.append("")
L.append("### Where the block's time goes (same runs)")
L.append("")
L.append("| n | threads | block ms | sum of stage medians, ms | qkv in block / alone, ms | ffn | out | scores | "
         "mix | scale + mask + softmax, ms |")
L.append("|---|---|---|---|---|---|---|---|---|---|")
L.extend(detail)
L.append("")
L.append("\"In block\" is the stage's median inside the block with the full trace recorded (its buffers "
         "are the trace's); \"alone\" is our kernels on the same products on warm buffers (the kernel "
         "column above). With the full trace the attention is fused: the softmax stage runs the scores' and "
         "the mix's products too (a row block at a time), so their own stages hold only the opening and "
         "recording of their steps, and the last column holds all of the attention's time.")
L.append("")
L.extend(decode_section())
L.extend(gpt2_section())
L.extend(llama_section())
L.append("Commands (from the repository's root; `attntrace` is the binary given to the script):")
L.append("")
L.append("```sh")
L.append(f"bench/run_standard.sh {m['bin']}")
L.append(f"# which ran, for each n and thread count, {rounds} round(s) of:")
L.extend(commands)
L.append("```")
section = "\n".join(L) + "\n"

if print_only:
    sys.stdout.write(section)
    sys.exit(0)
text = open(out).read() if os.path.exists(out) else "# Performance\n"
lines = text.split("\n")
start = next((i for i, l in enumerate(lines) if l.strip() == "## Standard run"), None)
if start is None:
    new = text.rstrip("\n") + "\n\n" + section
else:
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^## ", lines[i])), len(lines))
    before = "\n".join(lines[:start]).rstrip("\n")
    after = "\n".join(lines[end:]).strip("\n")
    new = (before + "\n\n" if before else "") + section + ("\n" + after + "\n" if after else "")
with open(out, "w") as f:
    f.write(new)
sys.stdout.write(section)
print(f"run_standard.sh: wrote the section \"## Standard run\" of {out}", file=sys.stderr)
PY
echo "run_standard.sh: done in ${elapsed} s; raw JSON and commands in $RAW" >&2
