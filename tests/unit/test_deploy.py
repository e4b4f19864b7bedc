"""deploy/: the container image definition and the Kubernetes example agree with hivewire's defaults, keys,
commands and HTTP paths. (Docker and Kubernetes cannot run on these machines: the files are parsed and
checked against the code instead.)"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._key import key_of_env
from hivewire.runtime._app import App
from hivewire.runtime._metrics import HealthServer, Metrics
from hivewire.tools._cli import main

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def _manifests() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((DEPLOY / "kubernetes" / "hivewire-run.yaml").read_text()) if doc]


def test_the_image_exposes_the_default_ports_and_runs_the_command() -> None:
    instructions = _dockerfile()
    exposed = {int(p) for args in (a for i, a in instructions if i == "EXPOSE") for p in args.split()}
    assert exposed == {int(keys.ENDPOINT_PORT.default or 0), int(keys.SHIM_PORT.default or 0)}
    (entrypoint,) = [json.loads(a) for i, a in instructions if i == "ENTRYPOINT"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert entrypoint == list(scripts)  # ["hivewire"]
    for source in (a.split()[0] for i, a in instructions if i == "COPY" and not a.startswith("--from")):
        assert (ROOT / source).exists(), source
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in re.findall(r"'\.\[(\w+)\]'", " ".join(a for i, a in instructions if i == "RUN")):
        assert extra in extras
    (health,) = [a for i, a in instructions if i == "HEALTHCHECK"]
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\S+?)'", health)
    assert url is not None and int(url.group(1)) == int(keys.ENDPOINT_PORT.default or 0)
    _assert_served([url.group(2)])


def test_the_kubernetes_example_matches_the_settings_and_the_health_endpoint(tmp_path: Path) -> None:
    by_kind = {doc["kind"]: doc for doc in _manifests()}
    assert set(by_kind) == {"ConfigMap", "Deployment", "Service"}
    files = by_kind["ConfigMap"]["data"]
    properties = tmp_path / "hivewire.properties"
    properties.write_text(files["hivewire.properties"])
    config = Config.load(file=properties, env={})
    config.check_keys()  # every key is a declared one
    port = config.read(keys.ENDPOINT_PORT)

    # the listener module in the ConfigMap is a working App
    namespace: dict[str, Any] = {}
    exec(compile(files["listeners.py"], "listeners.py", "exec"), namespace)
    assert isinstance(namespace["app"], App) and namespace["app"].listeners

    pod = by_kind["Deployment"]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"metrics": port}
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(port)
    probes = [container["livenessProbe"]["httpGet"], container["readinessProbe"]["httpGet"]]
    assert all(p["port"] == "metrics" for p in probes)
    _assert_served([p["path"] for p in probes] + [pod["metadata"]["annotations"]["prometheus.io/path"]])
    for variable in container.get("env", ()):
        assert keys.find_key(key_of_env(variable["name"])) is not None, variable["name"]

    # the arguments are a valid command line of the image's entry point, and the config file is mounted there
    args = container["args"]
    command = main.commands[args[0]]
    options = {opt for param in command.params for opt in getattr(param, "opts", ())}
    assert all(a in options for a in args if a.startswith("-")), args
    mount = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}["app"]
    assert args[args.index("--config") + 1] == f"{mount}/hivewire.properties"
    service_ports = by_kind["Service"]["spec"]["ports"]
    assert [(p["port"], p["targetPort"]) for p in service_ports] == [(port, "metrics")]


def _assert_served(paths: list[str]) -> None:
    """Each path answers 200 on hivewire's own health server while healthy."""
    server = HealthServer(Metrics(), lambda: {"status": "UP", "alive": True}, 0, host="127.0.0.1").start()
    try:
        for path in paths:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=10) as reply:
                assert reply.status == 200, path
    finally:
        server.stop()
