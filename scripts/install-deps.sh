#!/usr/bin/env bash
# Installs what attntrace needs on Debian 12, skipping what is already there.
# Run as root (or with sudo). Safe to run again.
#   --generators  also what tests/models' generators need to write the tiny
#                 checkpoints and their float64 references again (never needed
#                 to build or test: their outputs are committed)
#   --bench       also what bench/run_standard.sh compares against: PyTorch and
#                 OpenBLAS (PyTorch's fp32 matmul and bench's cblas_sgemm column;
#                 without it Debian's torch calls the reference BLAS, ~36x slower,
#                 no baseline). Never needed to build or test.
set -euo pipefail

packages=(
  cmake g++ make                 # build
  ninja-build                    # CI's generator (.ci/run): schedules every target's files together, where make waits for each layer's slowest file
  ccache                         # compiler cache: CI's builds share objects and rebuild only what changed
  libxtensor-dev xtl-dev libxsimd-dev   # tensors, SIMD
  libfmt-dev libcli11-dev nlohmann-json3-dev
  libpcre2-dev pkg-config        # Unicode categories for the tokenizers' pre-tokenizer patterns (PCRE2 with UTF + UCP)
  libutf8proc-dev                # WordPiece's normalizer (BERT): NFD, accent (Mn) stripping, lower-casing, categories
  libsentencepiece-dev           # SentencePiece tokenizer.model files (Llama 1/2, Mistral), read by Google's library
  catch2                         # tests
  libvalijson-dev                # JSON Schema validation of traces (tests)
  clang libclang-rt-14-dev libomp-dev   # libFuzzer targets (scripts/fuzz.sh): clang's fuzzer runtime and OpenMP
  chromium                       # the HTML report's test opens every lesson's page in it, headless (ctest -R report_chromium)
  pybind11-dev python3-pybind11  # the Python module (python/, docs/python.md), built for the system's python3
  python3-dev python3-numpy      # its headers, and the arrays run[step] hands out
  python3-pytest                 # the module's tests (ctest -L python)
  python3-nbconvert python3-ipykernel   # docs/examples/attention.ipynb executed by ctest -R python_notebook
)
for arg in "$@"; do
  case "$arg" in
    --generators)  # PyTorch's forward in float64 is the reference each tiny checkpoint is held to
      packages+=(python3-torch python3-numpy python3-sentencepiece) ;;
    --bench)       # the standard benchmark's anchors: PyTorch on OpenBLAS's kernels, and bench's OpenBLAS column
      packages+=(python3-torch libopenblas0-pthread libopenblas-dev) ;;
    *) echo "install-deps: unknown option $arg (--generators, --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
