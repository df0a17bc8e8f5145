"""benchlib's own version, and the version of its methodology that results files record.

Here, in the bottom stage, so a stage that stamps a version on what it writes imports a
dependency-free module instead of the package (whose ``__init__`` is the public API).
"""

from __future__ import annotations

__version__ = "0.1.0"
# Raised when a change to how workloads measure makes old results incomparable with new ones.
METHODOLOGY_VERSION = "1"
