"""The first bytes of plan formats that are not TensorRT's (cpp/providers/plan_magic.h).

The test providers' engines (docs/test-engine-format.md) start with
TEST_ENGINE_MAGIC. `testing` builds and parses them; production code (the
TensorRT Python provider, which refuses them, and `inspect`, which names
them) only tells them apart, from here, so it never imports `testing`.
"""

from __future__ import annotations

TEST_ENGINE_MAGIC = b"TTE-TEST-ENGINE\n"


def is_test_engine_plan(plan: bytes | bytearray | memoryview) -> bool:
    """True when `plan` starts with the test-engine magic: a test plan, valid or not."""
    return bytes(plan[: len(TEST_ENGINE_MAGIC)]) == TEST_ENGINE_MAGIC
