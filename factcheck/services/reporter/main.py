"""`factcheck-reporter`: serve ReporterService on FACTCHECK_LISTEN (default port 50054)."""

from factcheck.server import run_model_service
from factcheck.services.reporter.service import ReporterService
from factcheck.v1 import reporter_pb2, reporter_pb2_grpc


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
