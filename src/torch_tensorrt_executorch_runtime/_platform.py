"""Torch-TensorRT's target_platform token for this machine (blob metadata, `inspect`)."""

from __future__ import annotations

import platform
import sysconfig


def this_platform() -> str:
    """Torch-TensorRT's target_platform token for this machine."""
    system = platform.system().lower()
    machine = platform.machine().lower()
    if system.startswith("linux"):
        if machine.startswith("aarch64") or machine.startswith("arm64"):
            return "linux_aarch64"
        if machine.startswith("x86_64") or machine.startswith("amd64"):
            return "linux_x86_64"
    elif system.startswith("windows"):
        tag = sysconfig.get_platform().lower()
        if tag in ("win-arm64", "win_arm64") or machine.startswith(("arm64", "aarch64")):
            return "windows_arm64"
        if tag in ("win-amd64", "win_amd64") or machine.startswith(("amd64", "x86_64")):
            return "windows_x86_64"
    return "unknown"
