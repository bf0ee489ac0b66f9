"""`factcheck-checker`: serve CheckerService on FACTCHECK_LISTEN (default port 50053)."""

from factcheck.server import run_model_service
from factcheck.services.checker.service import CheckerService
from factcheck.v1 import checker_pb2, checker_pb2_grpc


def main() -> None:
    run_model_service(
        "factcheck-checker",
        checker_pb2,
        "CheckerService",
        checker_pb2_grpc.add_CheckerServiceServicer_to_server,
        CheckerService,
    )


if __name__ == "__main__":
    main()
