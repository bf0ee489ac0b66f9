# One image per service, each from its own target, on one shared base:
#   docker build --target gateway -t factcheck-gateway .     (also `factcheck-gateway migrate`: the migrate job)
#   docker build --target extractor -t factcheck-extractor .
#   docker build --target checker -t factcheck-checker .     (the only one with the entailment model's runtime)
#   docker build --target reporter -t factcheck-reporter .
# Each image holds the contract, the shared library and its own service's distribution, nothing of the others;
# the built-in local/ engines and their data (engines/: factcheck-engines) only in the images of the services
# that run them (extractor, checker, reporter), never in the gateway's. No image holds the command line (cli/).
# Health checks use `python -m factcheck.kit.healthcheck HOST:PORT` (it speaks TLS when FACTCHECK_TLS is on).

# --- base: the contract (factcheck-api) and the shared library (factcheck) --------------------------------
FROM python:3.11-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# The contract: factcheck-api is on no registry, so it is built from api/. protos/ comes with it: the build
# may read the .proto files from there.
COPY protos ./protos
COPY api ./api
RUN pip install ./api
# The shared library's dependencies first, so a code change does not reinstall them. No extra but traces and
# metrics (otel: OpenTelemetry's OTEL_* environment turns them on in any service); the services' own needs
# come with them.
COPY pyproject.toml README.md ./
RUN mkdir -p factcheck \
    && pip install '.[otel]' \
    && pip uninstall -y factcheck
# The source tree is the library: installed in place, every data file it ships (the evaluation sets, the
# gazetteer) is where the code looks for it.
COPY factcheck ./factcheck
RUN pip install --no-deps -e . \
    && useradd --system --uid 10001 --home-dir /app factcheck

# --- engines: the built-in local/ engines and their data (factcheck-engines), for the services that run them --
# Its only dependency is the shared library, already in base. Installed from a bind mount (BuildKit, Docker's
# default builder; writable for the build, discarded after), so the image holds the engines' 23 MB of data
# once, in site-packages, not a second time as a copied source tree.
FROM base AS engines
RUN --mount=type=bind,source=engines,target=/app/engines,rw pip install --no-deps ./engines

# --- the services: each installs its own distribution ------------------------------------------------------
# Its dependencies first, from its pyproject.toml and a stub package, so a code change does not reinstall them;
# the stub's tree goes with them (a build/ left by it could put the stub's files, newer than the copied
# sources, into the real wheel).

FROM engines AS extractor
COPY services/extractor/pyproject.toml ./services/extractor/
RUN mkdir services/extractor/factcheck_extractor && touch services/extractor/factcheck_extractor/__init__.py \
    && pip install ./services/extractor && pip uninstall -y factcheck-extractor && rm -rf services/extractor
COPY services/extractor ./services/extractor
RUN pip install --no-deps ./services/extractor
USER 10001
# gRPC 50052; metrics 9464 (FACTCHECK_METRICS_LISTEN).
EXPOSE 50052 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-m", "factcheck.kit.healthcheck", "localhost:50052"]
CMD ["factcheck-extractor"]

# factcheck-checker asks for factcheck-engines[nli]: the ONNX runtime of local/checker's embedded entailment model.
FROM engines AS checker
COPY services/checker/pyproject.toml ./services/checker/
RUN mkdir services/checker/factcheck_checker && touch services/checker/factcheck_checker/__init__.py \
    && pip install ./services/checker && pip uninstall -y factcheck-checker && rm -rf services/checker
COPY services/checker ./services/checker
RUN pip install --no-deps ./services/checker
USER 10001
EXPOSE 50053 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-m", "factcheck.kit.healthcheck", "localhost:50053"]
CMD ["factcheck-checker"]

FROM engines AS reporter
COPY services/reporter/pyproject.toml ./services/reporter/
RUN mkdir services/reporter/factcheck_reporter && touch services/reporter/factcheck_reporter/__init__.py \
    && pip install ./services/reporter && pip uninstall -y factcheck-reporter && rm -rf services/reporter
COPY services/reporter ./services/reporter
RUN pip install --no-deps ./services/reporter
USER 10001
EXPOSE 50054 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-m", "factcheck.kit.healthcheck", "localhost:50054"]
CMD ["factcheck-reporter"]

# factcheck-gateway brings the runs database's drivers (SQLAlchemy, Alembic, psycopg); its migrations are
# package data. The same image runs the migrations: `factcheck-gateway migrate`. No engines: the gateway runs
# no local/ model, the checker, extractor and reporter do.
FROM base AS gateway
COPY services/gateway/pyproject.toml ./services/gateway/
RUN mkdir services/gateway/factcheck_gateway && touch services/gateway/factcheck_gateway/__init__.py \
    && pip install ./services/gateway && pip uninstall -y factcheck-gateway && rm -rf services/gateway
COPY services/gateway ./services/gateway
RUN pip install --no-deps ./services/gateway
USER 10001
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=15s --retries=3 \
    CMD ["python", "-m", "factcheck.kit.healthcheck", "localhost:50051"]
CMD ["factcheck-gateway"]
