"""Device names (``auto``, ``cpu``, ``cuda``, ``cuda:N``) checked without importing torch.

:func:`check_device_name` refuses what no run on this machine can use before the
heavy imports: a name of another form, and CUDA asked of a CPU build of torch (told
by the installed torch's version label, ``+cpu``). :func:`~nnsweeper.models.base.resolve_device`
checks the rest (a GPU present, its index) once torch is imported.
"""

from __future__ import annotations

import re
from importlib import metadata

__all__ = ["check_device_name", "cuda_unavailable"]

_NAME = re.compile(r"auto|cpu|cuda(:\d+)?")


def cuda_unavailable(device: str, torch_version: str) -> str:
    """The message of a CUDA device asked of a torch installation without CUDA."""
    return (f"device {device!r} asks for CUDA, but CUDA is not available in this torch installation "
            f"(torch {torch_version}); use 'cpu' or 'auto'")


def check_device_name(device) -> str:
    """``device`` when it may name a device of this machine; ValueError otherwise, naming it.

    Raises
    ------
    ValueError
        Not ``auto``, ``cpu``, ``cuda`` or ``cuda:N``; or a CUDA device while the installed
        torch is a CPU build.
    """
    if not isinstance(device, str) or not _NAME.fullmatch(device):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}")
    if device.startswith("cuda"):
        try:
            version = metadata.version("torch")
        except metadata.PackageNotFoundError:  # (torch's own import says so)
            return device
        if version.endswith("+cpu"):
            raise ValueError(cuda_unavailable(device, version))
    return device
