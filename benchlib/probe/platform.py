"""Which notebook platform is this? A pure function of the environment, so tests can fake any.

The signals and their sources are listed in the project's facts (platforms note N1). Order matters:
Kaggle's image is built from Colab's, so Colab markers can show up on Kaggle and Kaggle goes first.
Platforms with their own environment variables come before those known only by a home path.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Mapping

from benchlib.results.schema import PlatformInfo

PathExists = Callable[[str], bool]
ModuleAvailable = Callable[[str], bool]

# Any one of these variables means Colab; COLAB_GPU may be set but empty on TPU runtimes.
_COLAB_ENV = ("COLAB_RELEASE_TAG", "COLAB_GPU", "COLAB_BACKEND_VERSION")
_KAGGLE_ENV = ("KAGGLE_KERNEL_RUN_TYPE", "KAGGLE_URL_BASE", "KAGGLE_DOCKER_IMAGE")
_KAGGLE_PATHS = ("/kaggle/working", "/kaggle/input")
_HF_SPACES_ENV = ("SPACE_ID", "SPACE_HOST")
# LIGHTNING_CLOUD_SPACE_ID is what Lightning's own SDK reads to tell it runs inside a Studio; a bare
# LIGHTNING_ prefix is not enough because the CLI's login variables are set on laptops too.
_LIGHTNING_ENV = ("LIGHTNING_CLOUD_SPACE_ID", "LIGHTNING_CLOUD_PROJECT_ID")
_LIGHTNING_PATH = "/teamspace/studios/this_studio"
_PAPERSPACE_PREFIX = "PAPERSPACE_"
_AI_STUDIO_PATH = "/home/aistudio"
_STUDIO_LAB_PATH = "/home/studio-lab-user"


def module_available(name: str) -> bool:
    """True if ``name`` is imported already or importable, without importing it."""
    if name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        # find_spec raises when a parent package is missing or a module has no spec.
        return False


def _first_env(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in environ), None)


def _env_signal(environ: Mapping[str, str], name: str) -> str:
    # Only called for variables that hold no secrets (run type, tags, ids, hosts).
    return f"env {name}={environ[name]}" if environ[name] else f"env {name}"


def _kaggle(environ: Mapping[str, str], path_exists: PathExists) -> PlatformInfo | None:
    name = _first_env(environ, _KAGGLE_ENV)
    if name is not None:
        run_type = environ.get("KAGGLE_KERNEL_RUN_TYPE", "").strip().lower() or None
        return PlatformInfo(name="kaggle", variant=run_type, signal=_env_signal(environ, name))
    path = next((p for p in _KAGGLE_PATHS if path_exists(p)), None)
    if path is not None:
        return PlatformInfo(name="kaggle", signal=f"path {path}")
    return None


def _colab(environ: Mapping[str, str], path_exists: PathExists, is_available: ModuleAvailable) -> PlatformInfo | None:
    if environ.get("VERTEX_PRODUCT") == "COLAB_ENTERPRISE":
        return PlatformInfo(name="colab", variant="enterprise", signal="env VERTEX_PRODUCT=COLAB_ENTERPRISE")
    name = _first_env(environ, _COLAB_ENV)
    if name is not None:
        return PlatformInfo(name="colab", signal=_env_signal(environ, name))
    if is_available("google.colab"):
        return PlatformInfo(name="colab", signal="module google.colab")
    if path_exists("/content/sample_data"):
        return PlatformInfo(name="colab", signal="path /content/sample_data")
    return None


def _hf_spaces(environ: Mapping[str, str]) -> PlatformInfo | None:
    name = _first_env(environ, _HF_SPACES_ENV)
    if name is None:
        return None
    # ACCELERATOR names the Space hardware tier, e.g. "t4-medium" or "none".
    return PlatformInfo(name="hf-spaces", variant=environ.get("ACCELERATOR") or None, signal=_env_signal(environ, name))


def _lightning(environ: Mapping[str, str], path_exists: PathExists) -> PlatformInfo | None:
    name = _first_env(environ, _LIGHTNING_ENV)
    if name is not None:
        return PlatformInfo(name="lightning", signal=_env_signal(environ, name))
    if path_exists(_LIGHTNING_PATH):
        return PlatformInfo(name="lightning", signal=f"path {_LIGHTNING_PATH}")
    return None


def _paperspace(environ: Mapping[str, str]) -> PlatformInfo | None:
    name = next((n for n in sorted(environ) if n.startswith(_PAPERSPACE_PREFIX)), None)
    return PlatformInfo(name="paperspace", signal=f"env {name}") if name else None


def detect_platform(
    environ: Mapping[str, str] | None = None,
    path_exists: PathExists | None = None,
    is_available: ModuleAvailable | None = None,
) -> PlatformInfo:
    """Name the platform and the signal that decided; ``local`` when nothing matches.

    Every input defaults to the real one (``os.environ``, ``os.path.exists``, an import-free
    module lookup); tests pass fakes.
    """
    environ = os.environ if environ is None else environ
    path_exists = os.path.exists if path_exists is None else path_exists
    is_available = module_available if is_available is None else is_available

    found = (
        _kaggle(environ, path_exists)
        or _colab(environ, path_exists, is_available)
        or _hf_spaces(environ)
        or _lightning(environ, path_exists)
        or _paperspace(environ)
    )
    if found is not None:
        return found
    if path_exists(_AI_STUDIO_PATH):
        return PlatformInfo(name="ai-studio", signal=f"path {_AI_STUDIO_PATH}")
    if path_exists(_STUDIO_LAB_PATH):
        return PlatformInfo(name="studio-lab", signal=f"path {_STUDIO_LAB_PATH}")
    return PlatformInfo(name="local", signal=None)
