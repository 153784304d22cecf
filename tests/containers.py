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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".cache" / "containers"
PACKAGES = ("podman", "buildah", "mmdebstrap", "podman-compose", "runc")
APP_BASE = "localhost/debian-py:bookworm"
PG_BASE = "localhost/groupmate-test-postgres-base:bookworm"
PG_IMAGE = "localhost/groupmate-test-postgres:15"
IMAGE = "localhost/groupmate:test"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
_CONF = """\
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
"""


@dataclass(frozen=True, slots=True)
class Built:
    """An image built for the tests: its name, how long the build took (None: it was
    there already) and its size in bytes."""

    name: str
    seconds: float | None
    size: int


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


def build_image() -> Built:
    """groupmate's image from this checkout's Containerfile, on the Debian base (as the
    README's "Run with Docker or Podman" builds it, with `--build-arg BASE`)."""
    ensure_podman()
    _debian_image(APP_BASE, "python3,python3-venv,ca-certificates")
    began = time.monotonic()
    podman(
        "build", "--quiet", "--format", "docker", "--build-arg", f"BASE={APP_BASE}",
        "--volume", f"{HOST_CA}:/run/host-ca.crt:ro", "--tag", IMAGE,
        "--file", "Containerfile", str(ROOT), timeout=1800,
    )  # fmt: skip
    return Built(IMAGE, time.monotonic() - began, size_of(IMAGE))


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
