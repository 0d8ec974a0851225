"""The container image, checked without building it (this machine cannot pull base
images): the Dockerfile parsed, its COPY sources present and not ignored, a user that is
not root, a health check on /healthz, the Python of pyproject.toml; compose.yaml and
deploy/k8s naming the tag `make image` builds."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def parse_dockerfile(text: str) -> list[Stage]:
    """Stages of instructions (keyword, arguments), continuation lines joined, comments dropped."""
    stages: list[Stage] = []
    logical = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not logical and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        keyword, _, args = logical.partition(" ")
        logical = ""
        keyword = keyword.upper()
        if keyword == "FROM":
            parts = args.split()
            stages.append(Stage(parts[0], parts[2] if len(parts) > 2 and parts[1].upper() == "AS" else None))
        elif keyword == "ARG" and not stages:
            continue
        else:
            stages[-1].instructions.append((keyword, args.strip()))
    return stages


def copy_sources(args: str) -> tuple[str | None, list[str]]:
    """(the --from stage or None, the sources) of a COPY's arguments."""
    words = args.split()
    stage = next((w.split("=", 1)[1] for w in words if w.startswith("--from=")), None)
    paths = [w for w in words if not w.startswith("--")]
    return stage, paths[:-1]


def ignored(path: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if fnmatch.fnmatch(path, bare) or path.startswith(bare + "/") or fnmatch.fnmatch(path, bare + "/*"):
            return True
    return False


STAGES = parse_dockerfile((ROOT / "Dockerfile").read_text())
FINAL = STAGES[-1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
IMAGE = f"rpay:{PYPROJECT['project']['version']}"


def test_the_dockerfile_parses_into_named_stages() -> None:
    assert len(STAGES) >= 2, "multi-stage"
    assert all(stage.name for stage in STAGES[:-1])
    assert parse_dockerfile("FROM a AS b\nRUN x \\\n  && y\n# c\nUSER 1\n")[0].instructions == [
        ("RUN", "x  && y"), ("USER", "1")]


def test_every_copy_source_is_in_the_build_context_or_an_earlier_stage() -> None:
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    names = set()
    for stage in STAGES:
        for args in stage.all("COPY"):
            source_stage, sources = copy_sources(args)
            assert sources, args
            if source_stage is not None:
                assert source_stage in names, f"COPY --from={source_stage}: no such earlier stage"
                continue
            for source in sources:
                assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
                assert not ignored(source, patterns), f"COPY {source}: excluded by .dockerignore"
        names.add(stage.name)


def test_the_build_context_leaves_out_local_state() -> None:
    patterns = (ROOT / ".dockerignore").read_text().split()
    for folder in ("var/", ".venv/", "node_modules/", ".git/", "tests/", "artifacts/"):
        assert folder in patterns


def test_the_runtime_is_slim_python_of_pyproject_without_compilers() -> None:
    wanted = re.search(r"(\d+\.\d+)", PYPROJECT["project"]["requires-python"]).group(1)
    assert FINAL.base == f"python:{wanted}-slim"
    assert f"py{wanted.replace('.', '')}" == PYPROJECT["tool"]["ruff"]["target-version"]
    build_stage = next(s for s in STAGES if s.name == "build")
    assert build_stage.base == FINAL.base  # the virtualenv's interpreter path is the same
    for args in FINAL.all("RUN"):
        assert not re.search(r"apt-get|apk |gcc|build-essential|pip install", args), args


def test_the_runtime_user_is_not_root() -> None:
    users = FINAL.all("USER")
    assert users, "the final stage sets no USER"
    assert users[-1].split(":")[0] not in ("root", "0")


def test_static_files_and_translations_are_built_into_the_image() -> None:
    runs = " ".join(s for stage in STAGES for s in stage.all("RUN"))
    assert "collectstatic" in runs
    assert "i18n.py compile" in runs
    copied = " ".join(FINAL.all("COPY"))
    assert "var/staticfiles" in copied and "locale" in copied


def test_a_health_check_on_healthz_and_gunicorn_started_with_exec() -> None:
    checks = FINAL.all("HEALTHCHECK")
    assert checks and "/healthz" in checks[-1]
    command = FINAL.all("CMD")[-1]
    assert command.startswith("[")  # exec form: no shell between the runtime and the script
    script = (ROOT / "deploy" / "container" / "start-web").read_text()
    assert re.search(r"^exec gunicorn ", script, re.M)
    assert "--graceful-timeout" in script
    assert (ROOT / "deploy" / "container" / "start-web").stat().st_mode & 0o111


def test_make_image_builds_the_tag_that_compose_and_kubernetes_run() -> None:
    dry_run = subprocess.run(["make", "-n", "image", "CONTAINER_TOOL=docker"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    assert f"docker build -t {IMAGE} ." in dry_run
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert {"web", "postgres", "dynamodb", "localstripe", "payments", "reminders"} <= set(services)
    for name in ("web", "setup", "payments", "reminders"):
        assert services[name]["image"] == IMAGE, name
    for batch in ("payments", "reminders"):
        assert services[batch]["profiles"] == ["batch"]  # one-off: `docker compose run`
    assert services["web"]["environment"]["DATABASE_URL"].startswith("postgres://")
    images = []
    for path in sorted((ROOT / "deploy" / "k8s").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            spec = document["spec"]
            if document["kind"] == "CronJob":
                spec = spec["jobTemplate"]["spec"]
            if "template" in spec:
                images += [(path.name, c["image"]) for c in spec["template"]["spec"]["containers"]]
    assert {name for name, _ in images} == {"web-deployment.yaml", "payments-cronjob.yaml", "reminders-cronjob.yaml",
                                            "revenue-cronjob.yaml", "webhooks-deployment.yaml"}
    assert {image for _, image in images} == {IMAGE}


def test_the_revenue_cronjob_runs_every_part_of_the_split_rebuild() -> None:
    """deploy/k8s/revenue-cronjob.yaml: an Indexed Job of N pods, each keeping its part
    (docs/ANALYTICS.md, "A rebuild split over processes"); N a number of parts the rebuild
    accepts."""
    job = yaml.safe_load((ROOT / "deploy" / "k8s" / "revenue-cronjob.yaml").read_text())["spec"]["jobTemplate"]["spec"]
    assert job["completionMode"] == "Indexed" and job["completions"] == job["parallelism"]
    assert 16 % job["completions"] == 0
    [line] = job["template"]["spec"]["containers"][0]["args"]
    assert "revenue_rebuild --part $((JOB_COMPLETION_INDEX + 1)) --from yesterday --json" in line
