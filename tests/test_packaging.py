"""The Dockerfile, docker-compose.yml and deploy/k8s, checked offline: the Compose spec's JSON
schema, Kubernetes' schemas (kubernetes-validate), and every FACTCHECK_* variable they set
being a real setting. No Docker engine or cluster is needed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from factcheck.settings import Settings
from tests.processes import ROOT, start_service

COMPOSE = ROOT / "docker-compose.yml"
K8S = sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
DOCKERFILE = ROOT / "Dockerfile"
SERVICES = {"gateway": 50051, "extractor": 50052, "checker": 50053, "reporter": 50054}


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else shutil.which(name)


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _k8s() -> list[dict]:
    return [doc for path in K8S for doc in yaml.safe_load_all(path.read_text()) if doc]


def _kind(kind: str) -> list[dict]:
    return [doc for doc in _k8s() if doc["kind"] == kind]


# --- schemas -------------------------------------------------------------------------------------------


def test_compose_file_matches_the_compose_specification():
    done = _run(_tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(COMPOSE))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_check_does_reject_a_broken_file(tmp_path):
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("stop_grace_period: 45s", "stop_grace_period: 45s\n  replicaz: 3"))
    done = _run(_tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(broken))
    assert done.returncode != 0 and "replicaz" in done.stdout + done.stderr


def test_kubernetes_manifests_are_valid():
    assert {path.name for path in K8S} >= {
        "configmap.yaml",
        "secret.yaml",
        "gateway.yaml",
        "extractor.yaml",
        "checker.yaml",
        "reporter.yaml",
    }
    done = _run(_tool("kubernetes-validate"), "--strict", *map(str, K8S))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("passed") == len(_k8s())


def test_the_kubernetes_check_does_reject_a_broken_manifest(tmp_path):
    broken = tmp_path / "checker.yaml"
    broken.write_text((ROOT / "deploy/k8s/checker.yaml").read_text().replace("periodSeconds: 5", "periodSecondz: 5"))
    done = _run(_tool("kubernetes-validate"), "--strict", str(broken))
    assert done.returncode != 0 and "periodSecondz" in done.stdout + done.stderr


# --- settings names ------------------------------------------------------------------------------------


def _compose_variables() -> set[str]:
    names = set()
    for service in _compose()["services"].values():
        environment = service.get("environment", {})
        if isinstance(environment, list):
            environment = dict(item.split("=", 1) for item in environment)
        names |= set(environment)
    return names


def _k8s_variables() -> set[str]:
    names = set()
    for doc in _k8s():
        if doc["kind"] == "ConfigMap":
            names |= set(doc["data"])
        elif doc["kind"] == "Secret":
            names |= set(doc.get("stringData", {})) | set(doc.get("data", {}))
        else:
            pod = doc["spec"].get("template", {}).get("spec", {})
            for container in pod.get("containers", []):
                names |= {item["name"] for item in container.get("env", [])}
    return names


def _dockerfile_variables() -> set[str]:
    return set(re.findall(r"\b(FACTCHECK_[A-Z0-9_]+)", DOCKERFILE.read_text()))


def test_every_factcheck_variable_they_set_is_a_setting():
    fields = set(Settings.model_fields)
    variables = {
        name
        for name in _compose_variables() | _k8s_variables() | _dockerfile_variables()
        if name.startswith("FACTCHECK_")
    }
    assert len(variables) > 10
    unknown = sorted(name for name in variables if name.removeprefix("FACTCHECK_").lower() not in fields)
    assert unknown == []


# --- what the operators rely on ------------------------------------------------------------------------


def test_compose_runs_postgres_a_migration_and_the_four_services_with_grpc_health_checks():
    services = _compose()["services"]
    assert "pgdata:/var/lib/postgresql/data" in services["postgres"]["volumes"] and "pgdata" in _compose()["volumes"]
    assert services["migrate"]["command"] == ["factcheck-gateway", "migrate"]
    gateway = services["gateway"]
    assert gateway["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert gateway["environment"]["FACTCHECK_CHECKER_TARGET"] == "dns:///checker:50053"
    assert gateway["environment"]["FACTCHECK_DATABASE_URL"].startswith("postgresql+psycopg://")
    images = {service["image"] for name, service in services.items() if name != "postgres"}
    assert images == {"factcheck:latest"}  # one image, one command per service
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name, port in SERVICES.items():
        service = services[name]
        assert service["command"][0] == f"factcheck-{name}" and service["command"][0] in scripts
        assert service["healthcheck"]["test"] == ["CMD", "python", "-m", "factcheck.healthcheck", f"localhost:{port}"]
        assert service["environment"]["FACTCHECK_LISTEN"] == f"0.0.0.0:{port}"
    # `--scale checker=3` needs a checker without a fixed name or host port.
    assert "container_name" not in services["checker"] and "ports" not in services["checker"]


def test_kubernetes_has_grpc_probes_a_headless_checker_service_and_an_hpa():
    deployments = {doc["metadata"]["name"]: doc for doc in _kind("Deployment")}
    assert set(deployments) == {f"factcheck-{name}" for name in SERVICES}
    for name, port in SERVICES.items():
        [container] = deployments[f"factcheck-{name}"]["spec"]["template"]["spec"]["containers"]
        assert container["command"] == [f"factcheck-{name}"]
        assert container["readinessProbe"]["grpc"]["port"] == port
        assert container["livenessProbe"]["grpc"]["port"] == port
        assert {"configMapRef": {"name": "factcheck-config"}} in container["envFrom"]
    services = {doc["metadata"]["name"]: doc for doc in _kind("Service")}
    assert services["factcheck-checker"]["spec"]["clusterIP"] == "None"
    assert "clusterIP" not in services["factcheck-gateway"]["spec"]
    [hpa] = _kind("HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "factcheck-checker"}
    [config] = _kind("ConfigMap")
    assert config["data"]["FACTCHECK_CHECKER_TARGET"] == "dns:///factcheck-checker:50053"
    [secret] = _kind("Secret")
    assert "FACTCHECK_MODEL_API_KEY" in secret["stringData"]
    model_key_users = {
        name
        for name, doc in deployments.items()
        for item in doc["spec"]["template"]["spec"]["containers"][0].get("env", [])
        if item["name"] == "FACTCHECK_MODEL_API_KEY"
    }
    assert model_key_users == {"factcheck-extractor", "factcheck-checker", "factcheck-reporter"}
    # Termination leaves room for the shutdown delay and grace period.
    grace = float(config["data"]["FACTCHECK_SHUTDOWN_DELAY_S"]) + float(config["data"]["FACTCHECK_SHUTDOWN_GRACE_S"])
    assert all(doc["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > grace for doc in deployments.values())


def test_the_dockerfile_builds_one_image_for_every_service():
    text = DOCKERFILE.read_text()
    # The image has the optional extras its settings can turn on: traces, and local/checker-nli's runtime.
    assert text.count("FROM ") == 1 and "'.[otel,nli]'" in text and "USER 10001" in text
    for port in SERVICES.values():
        assert str(port) in text


@pytest.mark.e2e
def test_the_container_health_check_command(tmp_path):
    checker = start_service("checker", {"FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path / 'fc.db'}"})
    try:
        ok = _run(sys.executable, "-m", "factcheck.healthcheck", checker.target)
        assert (ok.returncode, ok.stdout.strip()) == (0, "SERVING"), ok.stderr
        unknown = _run(sys.executable, "-m", "factcheck.healthcheck", checker.target, "--service", "nope")
        assert (unknown.returncode, unknown.stdout.strip()) == (1, "NOT_FOUND")
    finally:
        checker.stop()
    down = _run(sys.executable, "-m", "factcheck.healthcheck", checker.target, "--timeout", "1")
    assert down.returncode == 1 and down.stdout.strip() in {"UNAVAILABLE", "DEADLINE_EXCEEDED"}
