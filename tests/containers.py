"""Podman for the image tests, set up as it works on this machine kind (no registry to
pull from; checked): Debian's podman, buildah, mmdebstrap, podman-compose and runc, which
the tooling installs; runc, since crun refuses this machine's hybrid cgroups; ulimits
lowered to what containers may set here (nofile 20000, nproc 32768), in a containers.conf
of the tests' own (CONTAINERS_CONF: the machine's is not touched); base images made from
Debian's packages with mmdebstrap and imported. The host's CA bundle is mounted into the
build (HTTPS goes through a proxy with its own CA here), never copied into the image."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".cache" / "containers"
PACKAGES = ("podman", "buildah", "mmdebstrap", "podman-compose", "runc")
APP_BASE = "localhost/debian-py:bookworm"
PG_BASE = "localhost/groupmate-test-postgres-base:bookworm"
PG_IMAGE = "localhost/groupmate-test-postgres:15"
IMAGE = "localhost/groupmate:test"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
TOKEN = "image-test-token"
_CONF = """\
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
"""


@dataclass(frozen=True, slots=True)
class Built:
    """An image built for the tests: its name, how long the build took (None: it was
    there already), its size and its base's in bytes."""

    name: str
    seconds: float | None
    size: int
    base: int

    @property
    def own(self) -> int:
        """The image less its base: what groupmate adds."""
        return self.size - self.base


def environment() -> dict[str, str]:
    """The environment every podman command of the tests runs in."""
    WORK.mkdir(parents=True, exist_ok=True)
    conf = WORK / "containers.conf"
    if not conf.exists() or conf.read_text() != _CONF:
        conf.write_text(_CONF)
    return {**os.environ, "CONTAINERS_CONF": str(conf)}


def ensure_podman() -> None:
    if all(shutil.which(tool) for tool in ("podman", "mmdebstrap", "podman-compose", "runc")):
        return
    apt = shutil.which("apt-get")
    if apt is None:
        raise RuntimeError("podman is missing and there is no apt-get to install it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([apt, "update", "-qq"], check=True, capture_output=True, env=env)
    subprocess.run(
        [apt, "install", "-y", "-qq", *PACKAGES], check=True, capture_output=True, env=env
    )


def podman(
    *args: str, timeout: float = 600, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, env=environment()
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)}: {done.stderr[-3000:]}")
    return done


def exists(image: str) -> bool:
    return podman("image", "exists", image, check=False).returncode == 0


def _debian_image(name: str, packages: str) -> None:
    """A Debian bookworm image with `packages`, from Debian's own (mmdebstrap)."""
    if exists(name):
        return
    tar = WORK / f"{name.rsplit('/', 1)[-1].replace(':', '-')}.tar"
    subprocess.run(
        ["mmdebstrap", "--quiet", "--variant=apt", f"--include={packages}", "bookworm", str(tar)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    try:
        podman("import", "--quiet", str(tar), name)
    finally:
        tar.unlink(missing_ok=True)


def size_of(image: str) -> int:
    return int(podman("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())


def build_image(platforms: str | None = None) -> Built:
    """groupmate's image from this checkout's Containerfile, on the Debian base (as the
    README's "Run with Docker or Podman" builds it, with `--build-arg BASE`): with every
    platform (the default), or those `platforms` names (`--build-arg PLATFORMS`; empty:
    none), tagged apart."""
    ensure_podman()
    _debian_image(APP_BASE, "python3,python3-venv,ca-certificates")
    name, chosen = IMAGE, []
    if platforms is not None:
        name = f"{IMAGE}-{platforms.replace(',', '-') or 'none'}"
        chosen = ["--build-arg", f"PLATFORMS={platforms}"]
    began = time.monotonic()
    podman(
        "build", "--quiet", "--format", "docker", "--build-arg", f"BASE={APP_BASE}", *chosen,
        "--volume", f"{HOST_CA}:/run/host-ca.crt:ro", "--tag", name,
        "--file", "Containerfile", str(ROOT), timeout=1800,
    )  # fmt: skip
    return Built(name, time.monotonic() - began, size_of(name), size_of(APP_BASE))


def postgres_image() -> str:
    """The tests' PostgreSQL image (tests/container/postgres.Containerfile)."""
    ensure_podman()
    if not exists(PG_IMAGE):
        _debian_image(PG_BASE, "postgresql-15,ca-certificates")
        folder = ROOT / "tests" / "container"
        podman(
            "build", "--quiet", "--format", "docker", "--build-arg", f"BASE={PG_BASE}",
            "--tag", PG_IMAGE, "--file", str(folder / "postgres.Containerfile"), str(folder),
        )  # fmt: skip
    return PG_IMAGE


def healthy(base_url: str, within: float = 120) -> dict[str, object]:
    deadline = time.monotonic() + within
    while True:
        try:
            answer = httpx.get(f"{base_url}/healthz", timeout=10)  # > the 3 s database ask
            if answer.status_code == 200:
                body: dict[str, object] = answer.json()
                return body
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{base_url}/healthz did not answer within {within:.0f} s")
        time.sleep(0.2)


def say(base_url: str, text: str) -> str:
    message = {"chat_id": "g1", "chat_type": "group", "sender_id": "u1", "sender_name": "Ann"}
    answer = httpx.post(
        f"{base_url}/v1/messages",
        json={**message, "text": text},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    answer.raise_for_status()
    return str(answer.json()["replies"][0]["text"])


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"  # `mkdir data`, as the README says: root's, 0755
    folder.mkdir()
    yield folder
    # The bot's files are the container user's: removed from inside, as root.
    podman("unshare", "rm", "-rf", str(folder), check=False)
    shutil.rmtree(folder, ignore_errors=True)
