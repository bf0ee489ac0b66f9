"""`factcheck-reporter`: serve ReporterService on FACTCHECK_LISTEN (default port 50054)."""

from factcheck.serving.server import run_model_service
from factcheck.v1 import reporter_pb2, reporter_pb2_grpc
from factcheck_reporter.reporter_service import ReporterService


def main() -> None:
    run_model_service(
        "factcheck-reporter",
        reporter_pb2,
        "ReporterService",
        reporter_pb2_grpc.add_ReporterServiceServicer_to_server,
        ReporterService,
    )


if __name__ == "__main__":
    main()
