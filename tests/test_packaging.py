"""The Dockerfile, docker-compose.yml and deploy/k8s, checked offline: the Compose spec's JSON
schema, Kubernetes' schemas (kubernetes-validate), and every FACTCHECK_* variable they set
being a real setting. No Docker engine or cluster is needed.

And the distributions: factcheck-api (api/: the contract and its generated code), the shared library
(factcheck), the command line (cli/: factcheck-cli), the built-in engines (engines/: factcheck-engines) and the
four services (services/<name>: factcheck-<name>), built as wheels; each service's wheel asks for only its own
needs (the engines only where the service runs them), and factcheck-api alone in a fresh virtualenv calls a
running suite."""

from __future__ import annotations

import email
import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from factcheck.kit.settings import Settings
from tests.processes import ROOT, Suite, start_service, start_suite

COMPOSE = ROOT / "docker-compose.yml"
K8S = sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
DOCKERFILE = ROOT / "Dockerfile"
SERVICES = {"gateway": 50051, "extractor": 50052, "checker": 50053, "reporter": 50054}
SERVICE_PROJECTS = {name: tomllib.loads((ROOT / "services" / name / "pyproject.toml").read_text()) for name in SERVICES}
# The services that run the built-in local/ engines (factcheck-engines): every one but the gateway.
ENGINE_SERVICES = {"extractor", "checker", "reporter"}


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found is not None, f"no {name} on this machine"
    return found


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


# OpenTelemetry's standard variables a deployment sets for every service (the SDK reads them: otel.py).
OTEL_PASSED_THROUGH = {
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
    "OTEL_SDK_DISABLED",
}


def _opentelemetry_variables() -> set[str]:
    """Every variable OpenTelemetry's API and SDK define (their environment_variables modules)."""
    from opentelemetry import environment_variables as api
    from opentelemetry.sdk import environment_variables as sdk

    return {value for module in (api, sdk) for name, value in vars(module).items() if name.startswith("OTEL_")}


def test_every_otel_variable_they_set_is_one_opentelemetry_defines():
    variables = {name for name in _compose_variables() | _k8s_variables() if name.startswith("OTEL_")}
    assert variables >= OTEL_PASSED_THROUGH
    assert sorted(variables - _opentelemetry_variables()) == []


def test_compose_passes_opentelemetrys_variables_through_to_every_service():
    """A name without a value: the container gets the variable of the environment compose runs in, or none. One
    OTEL_SERVICE_NAME for four services would merge them, so each keeps its own (the process's name)."""
    services = _compose()["services"]
    for name in SERVICES:
        environment = services[name]["environment"]
        assert {variable: environment.get(variable, "absent") for variable in OTEL_PASSED_THROUGH} == dict.fromkeys(
            OTEL_PASSED_THROUGH
        ), name
        assert "OTEL_SERVICE_NAME" not in environment


def test_kubernetes_hands_every_service_the_opentelemetry_config_map():
    deployments = {doc["metadata"]["name"]: doc for doc in _kind("Deployment")}
    for name in SERVICES:
        [container] = deployments[f"factcheck-{name}"]["spec"]["template"]["spec"]["containers"]
        assert {"configMapRef": {"name": "factcheck-otel", "optional": True}} in container["envFrom"], name
        assert not [item for item in container.get("env", []) if item["name"].startswith("OTEL_")]
    [otel] = [doc for doc in _kind("ConfigMap") if doc["metadata"]["name"] == "factcheck-otel"]
    assert all(name.startswith("OTEL_") for name in otel["data"]) and "OTEL_SERVICE_NAME" not in otel["data"]
    # Nothing is sent until an operator names a collector (the endpoint is there, commented out).
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in otel["data"]
    assert "# OTEL_EXPORTER_OTLP_ENDPOINT:" in (ROOT / "deploy/k8s/configmap.yaml").read_text()


# --- what the operators rely on ------------------------------------------------------------------------


def test_compose_runs_postgres_a_migration_and_the_four_services_with_grpc_health_checks():
    services = _compose()["services"]
    assert "pgdata:/var/lib/postgresql/data" in services["postgres"]["volumes"] and "pgdata" in _compose()["volumes"]
    assert services["migrate"]["command"] == ["factcheck-gateway", "migrate"]
    gateway = services["gateway"]
    assert gateway["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert gateway["environment"]["FACTCHECK_CHECKER_TARGET"] == "dns:///checker:50053"
    assert gateway["environment"]["FACTCHECK_DATABASE_URL"].startswith("postgresql+psycopg://")
    # One image per service, built from its Dockerfile target; the migration runs in the gateway's.
    for name in SERVICES:
        assert services[name]["image"] == f"factcheck-{name}:latest"
        assert services[name]["build"] == {"context": ".", "target": name}
    assert (services["migrate"]["image"], services["migrate"]["build"]) == (
        services["gateway"]["image"],
        services["gateway"]["build"],
    )
    # The shared library declares no command: each distribution declares its own.
    assert "scripts" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for name, port in SERVICES.items():
        service = services[name]
        # The command is the console script the service's own distribution declares, running its main module.
        assert service["command"] == [f"factcheck-{name}"]
        assert SERVICE_PROJECTS[name]["project"]["scripts"] == {f"factcheck-{name}": f"factcheck_{name}.main:main"}
        assert service["healthcheck"]["test"] == [
            "CMD",
            "python",
            "-m",
            "factcheck.kit.healthcheck",
            f"localhost:{port}",
        ]
        assert service["environment"]["FACTCHECK_LISTEN"] == f"0.0.0.0:{port}"
    # `--scale checker=3` needs a checker without a fixed name or host port.
    assert "container_name" not in services["checker"] and "ports" not in services["checker"]


def test_kubernetes_has_grpc_probes_a_headless_checker_service_and_an_hpa():
    deployments = {doc["metadata"]["name"]: doc for doc in _kind("Deployment")}
    assert set(deployments) == {f"factcheck-{name}" for name in SERVICES}
    for name, port in SERVICES.items():
        [container] = deployments[f"factcheck-{name}"]["spec"]["template"]["spec"]["containers"]
        assert container["command"] == [f"factcheck-{name}"]
        assert container["image"] == f"factcheck-{name}:{SERVICE_PROJECTS[name]['project']['version']}"
        assert container["readinessProbe"]["grpc"]["port"] == port
        assert container["livenessProbe"]["grpc"]["port"] == port
        assert {"configMapRef": {"name": "factcheck-config"}} in container["envFrom"]
    [job] = _kind("Job")
    [migrate] = job["spec"]["template"]["spec"]["containers"]
    [gateway] = deployments["factcheck-gateway"]["spec"]["template"]["spec"]["containers"]
    assert migrate["image"] == gateway["image"] and migrate["command"] == ["factcheck-gateway", "migrate"]
    services = {doc["metadata"]["name"]: doc for doc in _kind("Service")}
    assert services["factcheck-checker"]["spec"]["clusterIP"] == "None"
    assert "clusterIP" not in services["factcheck-gateway"]["spec"]
    [hpa] = _kind("HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "factcheck-checker"}
    [config] = [doc for doc in _kind("ConfigMap") if doc["metadata"]["name"] == "factcheck-config"]
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


def _dockerfile_stages() -> dict[str, str]:
    """Each stage's instructions by its name (FROM ... AS name), without the comments."""
    instructions = "".join(line for line in DOCKERFILE.read_text().splitlines(True) if not line.startswith("#"))
    stages = re.split(r"^FROM ", instructions, flags=re.MULTILINE)[1:]
    named = {}
    for stage in stages:
        match = re.match(r"\S+ AS (\S+)\n", stage)
        assert match is not None, stage[:80]
        named[match.group(1)] = stage
    return named


def test_the_dockerfile_builds_one_image_per_service_on_a_shared_base():
    stages = _dockerfile_stages()
    assert set(stages) == {"base", "engines", *SERVICES}
    base = stages["base"]
    assert base.startswith("python:3.11-slim AS base")
    # factcheck-api is not on any registry: the base installs it from api/, with protos/ beside it (the
    # api build may read the .proto files there).
    assert "COPY api ./api" in base and "COPY protos ./protos" in base and "pip install ./api" in base
    # The shared library with traces only (otel): the entailment model's runtime is the checker's, the
    # database drivers the gateway's.
    assert "pip install '.[otel]'" in base and "pip install --no-deps -e ." in base and "[nli]" not in base
    assert "useradd --system --uid 10001" in base
    # The shared library alone: neither the engines (and their data) nor the command line.
    assert "COPY factcheck ./factcheck" in base and "engines" not in base and "cli" not in base
    # The engines: their own distribution, on the base, for the services that run them.
    engines = stages["engines"]
    assert engines.startswith("base AS engines\n") and "pip install --no-deps ./engines" in engines
    # No image holds the command line.
    assert not [name for name, stage in stages.items() if re.search(r"\bcli\b", stage)]
    for name, port in SERVICES.items():
        stage = stages[name]
        # Built on the engines where the service runs them; the gateway's on the base alone.
        assert stage.startswith(f"{'engines' if name in ENGINE_SERVICES else 'base'} AS {name}\n")
        # Only this service's distribution (its dependencies with it), nothing of another service's.
        assert f"COPY services/{name} ./services/{name}" in stage
        assert f"pip install --no-deps ./services/{name}" in stage
        others = set(SERVICES) - {name}
        assert not [other for other in others if f"services/{other}" in stage], name
        assert "USER 10001" in stage
        assert f"EXPOSE {port} 9464" in stage
        assert f'CMD ["factcheck-{name}"]' in stage
        assert f'CMD ["python", "-m", "factcheck.kit.healthcheck", "localhost:{port}"]' in stage


@pytest.mark.e2e
def test_the_container_health_check_command(tmp_path):
    checker = start_service("checker", {"FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path / 'fc.db'}"})
    try:
        ok = _run(sys.executable, "-m", "factcheck.kit.healthcheck", checker.target)
        assert (ok.returncode, ok.stdout.strip()) == (0, "SERVING"), ok.stderr
        unknown = _run(sys.executable, "-m", "factcheck.kit.healthcheck", checker.target, "--service", "nope")
        assert (unknown.returncode, unknown.stdout.strip()) == (1, "NOT_FOUND")
    finally:
        checker.stop()
    down = _run(sys.executable, "-m", "factcheck.kit.healthcheck", checker.target, "--timeout", "1")
    assert down.returncode == 1 and down.stdout.strip() in {"UNAVAILABLE", "DEADLINE_EXCEEDED"}


# --- the distributions: factcheck-api, factcheck, factcheck-cli, factcheck-engines and the services ---------

API_PROJECT = tomllib.loads((ROOT / "api" / "pyproject.toml").read_text())["project"]

# Run from a fresh virtualenv that has only factcheck-api: a fact-check through the generated stubs.
CLIENT = """
import json, sys
import grpc
import factcheck
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc

with grpc.insecure_channel(sys.argv[1]) as channel:
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    request = factcheck_pb2.RunRequest(
        question="Fact-check this paragraph",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check="The Eiffel Tower is in Paris. It was completed in 1889.",
            checker_models=["local/checker"],
        ),
    )
    events = [response.event for response in gateway.Run(request, timeout=120)]
    result = gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id), timeout=30).result
print(json.dumps({
    "factcheck_path": list(factcheck.__path__),
    "factcheck_file": getattr(factcheck, "__file__", None),
    "stubs": factcheck_pb2_grpc.__file__,
    "events": [event.WhichOneof("event") for event in events],
    "status": factcheck_pb2.MessageStatus.Name(result.status),
    "claims": len(result.extraction.claims),
}))
"""


def _wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    """Every wheel (api, main, cli, engines and the four services), built from clean copies of the sources (a
    build/ left in the tree could leak old files)."""
    sources, out = tmp_path_factory.mktemp("sources"), tmp_path_factory.mktemp("wheels")
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    shutil.copytree(ROOT / "api", sources / "api", ignore=skip)
    shutil.copytree(ROOT / "protos", sources / "protos")  # factcheck-api's build takes the .proto files from here
    shutil.copytree(ROOT / "factcheck", sources / "main" / "factcheck", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, sources / "main" / name)
    for name in ("cli", "engines"):
        shutil.copytree(ROOT / name, sources / name, ignore=skip)
    for name in SERVICES:
        shutil.copytree(ROOT / "services" / name, sources / name, ignore=skip)
    builds = [  # all at once: most of a build is waiting on pip's start-up
        subprocess.Popen(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out)]
            + [str(sources / project)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for project in ("api", "main", "cli", "engines", *SERVICES)
    ]
    for build in builds:
        output, _ = build.communicate(timeout=300)
        assert build.returncode == 0, output
    [api] = out.glob("factcheck_api-*.whl")
    [main] = out.glob("factcheck-[0-9]*.whl")
    built = {"api": api, "main": main}
    for name in ("cli", "engines", *SERVICES):
        [built[name]] = out.glob(f"factcheck_{name}-*.whl")
    return built


def _requirements(wheel: Path) -> list[Requirement]:
    return [Requirement(line) for line in _wheel_metadata(wheel).get_all("Requires-Dist") or []]


def _entry_points(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        return archive.read(name).decode()


def test_the_api_wheel_holds_only_the_contract_and_its_generated_code(wheels):
    names = [n for n in _wheel_names(wheels["api"]) if ".dist-info/" not in n]
    assert names and all(n.startswith("factcheck/v1/") for n in names)
    # No factcheck/__init__.py: alone, `factcheck` is a namespace package; beside the suite, the suite's.
    assert "factcheck/__init__.py" not in names
    protos = sorted(p.name for p in (ROOT / "protos" / "factcheck" / "v1").glob("*.proto"))
    for proto in protos:
        stem = proto.removesuffix(".proto")
        assert {f"factcheck/v1/{proto}", f"factcheck/v1/{stem}_pb2.py", f"factcheck/v1/{stem}_pb2.pyi"} <= set(names)
        assert f"factcheck/v1/{stem}_pb2_grpc.py" in names
    assert "factcheck/v1/py.typed" in names


def test_the_api_package_depends_only_on_grpcio_and_protobuf_in_ranges(wheels):
    metadata = _wheel_metadata(wheels["api"])
    assert (metadata["Name"], metadata["Version"]) == ("factcheck-api", API_PROJECT["version"])
    requirements = {Requirement(line).name: Requirement(line) for line in metadata.get_all("Requires-Dist", [])}
    assert set(requirements) == {"grpcio", "protobuf"}
    for requirement in requirements.values():
        operators = {spec.operator for spec in requirement.specifier}
        assert operators == {">=", "<"}, f"{requirement}: a compatible range, not a pin"
    # The lower bounds are what the generated code checks at import (see api/pyproject.toml).
    generated = (ROOT / "api" / "src" / "factcheck" / "v1" / "factcheck_pb2_grpc.py").read_text()
    grpc_match = re.search(r"GRPC_GENERATED_VERSION = '([\d.]+)'", generated)
    assert grpc_match is not None
    grpc_generated = grpc_match.group(1)
    assert requirements["grpcio"].specifier.contains(grpc_generated)
    assert not requirements["grpcio"].specifier.contains(_just_below(grpc_generated))
    header = (ROOT / "api" / "src" / "factcheck" / "v1" / "factcheck_pb2.py").read_text()
    protobuf_match = re.search(r"# Protobuf Python Version: ([\d.]+)", header)
    assert protobuf_match is not None
    protobuf_generated = protobuf_match.group(1)
    assert requirements["protobuf"].specifier.contains(protobuf_generated)
    assert not requirements["protobuf"].specifier.contains(_just_below(protobuf_generated))
    # What this venv runs is inside the ranges.
    assert requirements["grpcio"].specifier.contains(version("grpcio"))
    assert requirements["protobuf"].specifier.contains(version("protobuf"))


def _just_below(release: str) -> str:
    """1.85.1 -> 1.85.0; 7.35.0 -> 7.34.999."""
    *head, last = (int(part) for part in release.split("."))
    return ".".join(map(str, [*head, last - 1] if last else [*head[:-1], head[-1] - 1, 999]))


def test_the_suite_wheel_leaves_the_generated_code_to_the_api_package(wheels):
    names = _wheel_names(wheels["main"])
    assert not [n for n in names if n.startswith("factcheck/v1/")]
    # The shared library is `factcheck` alone; the command line, the engines and the services are their own
    # distributions.
    for wheel in (wheels["api"], wheels["main"]):
        packages = {n.split("/", 1)[0] for n in _wheel_names(wheel) if ".dist-info/" not in n}
        assert packages == {"factcheck"}, wheel.name
    assert not [n for n in names if n.startswith(("factcheck/cli/", "factcheck/engines/"))]
    [api] = [r for r in _requirements(wheels["main"]) if r.name == "factcheck-api"]
    assert api.specifier.contains(API_PROJECT["version"], prereleases=True)
    # It declares no command, and none of the command line's libraries (terminal tables, HTML templates).
    assert not [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert not {r.name.lower() for r in _requirements(wheels["main"])} & {"rich", "jinja2", "markdown-it-py"}


def test_the_command_line_wheel_holds_factcheck_cli_its_command_and_its_libraries(wheels):
    names = _wheel_names(wheels["cli"])
    assert {n.split("/", 1)[0] for n in names if ".dist-info/" not in n} == {"factcheck_cli"}
    assert "factcheck_cli/templates/page.html.j2" in names
    assert _entry_points(wheels["cli"]).split() == ["[console_scripts]", "factcheck", "=", "factcheck_cli.app:main"]
    requirements = {r.name.lower(): r for r in _requirements(wheels["cli"])}
    assert {"factcheck", "rich", "jinja2", "markdown-it-py"} <= set(requirements)
    library = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert requirements["factcheck"].specifier.contains(library)


def test_each_service_wheel_holds_its_package_and_its_console_script(wheels):
    for name in SERVICES:
        names = _wheel_names(wheels[name])
        packages = {n.split("/", 1)[0] for n in names if ".dist-info/" not in n}
        assert packages == {f"factcheck_{name}"}, name
        assert f"factcheck_{name}/main.py" in names
        # The service's own command, declared by its own distribution.
        assert f"factcheck-{name} = factcheck_{name}.main:main" in _entry_points(wheels[name])
        [library] = [r for r in _requirements(wheels[name]) if r.name == "factcheck"]
        assert library.specifier.contains(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])
    assert "factcheck_gateway/migrations/env.py" in _wheel_names(wheels["gateway"])  # package data travels with it


def _needs(wheel: Path) -> set[str]:
    """What a service's wheel brings: its own requirements, and the extras it asks of the shared library."""
    names = set()
    for requirement in _requirements(wheel):
        if requirement.marker is None:  # (an optional extra of the service itself is not brought)
            names.add(requirement.name)
            names |= {f"{requirement.name}[{extra}]" for extra in requirement.extras}
    return names


def test_each_service_wheel_asks_only_for_what_its_service_needs(wheels):
    database = {"sqlalchemy", "alembic", "psycopg"}
    model_runtime = {"factcheck-engines[nli]", "onnxruntime", "tokenizers", "numpy"}
    needs = {name: _needs(wheels[name]) for name in SERVICES}
    # The checker runs the engines with the embedded entailment model (the engines' nli extra), and no database.
    assert "factcheck-engines[nli]" in needs["checker"] and not needs["checker"] & database
    # The gateway owns the runs database, and runs no engine: neither the engines nor the model's runtime.
    assert database <= needs["gateway"] and not needs["gateway"] & (model_runtime | {"factcheck-engines"})
    for name in ("extractor", "reporter"):
        assert needs[name] == {"factcheck", "factcheck-engines"}, name
    # No service asks for the command line or its libraries.
    for name in SERVICES:
        assert not needs[name] & {"factcheck-cli", "rich", "jinja2", "markdown-it-py"}, name


def test_the_engines_wheel_ships_the_entailment_model_and_offers_its_runtime(wheels):
    # local/checker judges with the embedded model: the files ship with the engines, the runtime comes with
    # their `nli` extra (the checker's distribution asks for it). The shared library ships neither.
    names = _wheel_names(wheels["engines"])
    assert {n.split("/", 1)[0] for n in names if ".dist-info/" not in n} == {"factcheck_engines"}
    for name in ("model.onnx", "model.json", "vocab.txt"):
        assert f"factcheck_engines/data/nli/{name}" in names
    assert "factcheck_engines/data/verifier.json" in names
    assert not [r for r in _requirements(wheels["main"]) if r.name in {"onnxruntime", "tokenizers", "numpy"}]
    requirements = _requirements(wheels["engines"])
    for runtime in ("onnxruntime", "tokenizers", "numpy"):
        [requirement] = [r for r in requirements if r.name == runtime]
        assert requirement.marker is not None and requirement.marker.evaluate({"extra": "nli"}), runtime
        assert not requirement.marker.evaluate({"extra": ""}), runtime


def test_the_command_line_wheel_ships_the_demos_examples_where_the_demo_looks(wheels, tmp_path):
    """`factcheck demo` works from an installed wheel: its examples are package data beside the command."""
    examples = ROOT / "cli" / "factcheck_cli" / "examples"
    shipped = sorted(p.relative_to(ROOT / "cli").as_posix() for p in examples.rglob("*") if p.is_file())
    assert "factcheck_cli/examples/knowledge/apollo-11.html" in shipped and len(shipped) >= 7
    names = _wheel_names(wheels["cli"])
    assert [name for name in shipped if name not in names] == []
    target = tmp_path / "site"
    for wheel in (wheels["api"], wheels["main"], wheels["cli"]):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    done = subprocess.run(
        [sys.executable, "-c", "import factcheck_cli.demo as demo; print(demo.EXAMPLES)"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(target)},
    )
    assert done.returncode == 0, done.stderr
    installed = Path(done.stdout.strip())
    assert installed == target / "factcheck_cli" / "examples"
    assert (installed / "sample.txt").read_bytes() == (examples / "sample.txt").read_bytes()


def test_both_wheels_unpacked_together_share_one_factcheck_package(wheels, tmp_path):
    target = tmp_path / "site"
    for wheel in (wheels["api"], wheels["main"]):  # what an installer does with a pure-Python wheel
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    probe = (
        "import factcheck, factcheck.v1.factcheck_pb2 as api, factcheck.kit.settings as settings;"
        "print(api.__file__); print(settings.__file__)"
    )
    # Outside the checkout, with the unpacked wheels first on the path (the dependencies come from this venv).
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(target)},
    )
    assert done.returncode == 0, done.stderr
    assert [Path(line).parent for line in done.stdout.split()] == [
        target / "factcheck" / "v1",
        target / "factcheck" / "kit",
    ]
    assert not (target / "factcheck" / "__init__.py").exists()  # a namespace package: neither wheel ships one


@pytest.fixture(scope="module")
def local_suite_starting(tmp_path_factory) -> Iterator[Future[Suite]]:
    """The suite on its built-in local/ models, starting in the background while the venv is made."""
    database = tmp_path_factory.mktemp("suite") / "fc.db"
    with ThreadPoolExecutor(max_workers=1) as pool:
        starting = pool.submit(start_suite, {"FACTCHECK_DATABASE_URL": f"sqlite:///{database}"})
        yield starting
        if starting.exception() is None:  # a failed start already stopped what it had started
            starting.result().stop()


@pytest.fixture(scope="module")
def api_only_venv(wheels, tmp_path_factory) -> Path:
    """A fresh virtualenv with factcheck-api and its dependencies (grpcio, protobuf) only."""
    venv = tmp_path_factory.mktemp("api-only") / "venv"
    # This venv's pip installs into it (--python): no pip of its own to bootstrap.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    # Prefer the versions this venv runs (already in pip's cache); pip resolves them from the metadata.
    constraints = venv.parent / "constraints.txt"
    constraints.write_text(f"grpcio=={version('grpcio')}\nprotobuf=={version('protobuf')}\n")
    done = _pip(python, "install", "--quiet", "-c", str(constraints), str(wheels["api"]))
    assert done.returncode == 0, done.stdout + done.stderr
    return python


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pip", "--python", str(python), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@pytest.mark.e2e
def test_a_fresh_virtualenv_with_only_the_api_package_calls_a_running_suite(
    local_suite_starting, api_only_venv, tmp_path
):
    listed = _pip(api_only_venv, "list", "--format=json")
    installed = {item["name"].lower().replace("_", "-") for item in json.loads(listed.stdout)}
    assert "factcheck-api" in installed and installed <= {"factcheck-api", "grpcio", "protobuf", "typing-extensions"}
    suite = local_suite_starting.result()
    done = subprocess.run(
        [api_only_venv, "-c", CLIENT, suite.gateway_target],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,  # not the checkout: nothing of the repository is importable
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr + suite.logs()[-3000:]
    answer = json.loads(done.stdout)
    assert answer["factcheck_file"] is None  # a namespace package: factcheck-api ships no __init__.py
    assert answer["stubs"].startswith(str(api_only_venv.parent.parent))
    events = answer["events"]
    assert events[0] == "factcheck_start" and events[-1] == "complete"
    assert {"extract_complete", "checker_complete", "report_complete"} <= set(events)
    assert answer["status"] == "MESSAGE_STATUS_COMPLETE" and answer["claims"] >= 1
    # Only the contract is there: the suite's own code is not.
    missing = subprocess.run(
        [api_only_venv, "-c", "import factcheck.kit.settings"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert missing.returncode != 0 and "No module named 'factcheck.kit'" in missing.stderr
