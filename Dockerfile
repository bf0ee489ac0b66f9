# One image for the whole suite; the command picks the service:
#   factcheck-gateway | factcheck-gateway migrate | factcheck-extractor | factcheck-checker | factcheck-reporter
# Health checks use `python -m factcheck.kit.healthcheck HOST:PORT` (it speaks TLS when FACTCHECK_TLS is on).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# The contract (factcheck-api, from api/: the generated code) and the dependencies first,
# so a code change does not reinstall them.
COPY api ./api
COPY pyproject.toml README.md ./
RUN pip install ./api \
    && mkdir -p factcheck && touch factcheck/__init__.py \
    && pip install '.[otel]' \
    && pip uninstall -y factcheck
# The source tree is the application: installed in place, every data file it ships
# (migrations, the local engines' data) is where the code looks for it.
COPY factcheck ./factcheck
RUN pip install --no-deps -e . \
    && useradd --system --uid 10001 --home-dir /app factcheck

USER 10001
# gRPC: gateway 50051, extractor 50052, checker 50053, reporter 50054; metrics 9464.
EXPOSE 50051 50052 50053 50054 9464
CMD ["factcheck-gateway"]
