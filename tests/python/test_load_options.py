"""The load options come from one table, the plugin's: Python reads it, the CLI parses and lists
with it, and the documentation's table says the same."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def documented_options() -> list[tuple[str, str]]:
    """(name, type) of each row of docs/python.md's load-option table, in order."""
    text = (ROOT / "docs" / "python.md").read_text()
    start = text.index("- Load options (`options=`)")
    rows = []
    for line in text[start:].splitlines()[1:]:
        line = line.strip()
        if rows and not line.startswith("|"):
            break
        match = re.match(r"\|\s*`(\w+)`\s*\|\s*([^|]+?)\s*\|", line)
        if match:
            rows.append((match.group(1), match.group(2)))
    return rows


def test_the_documentation_lists_the_table(tte):
    table = [(option.name, option.type) for option in tte.load_options()]
    assert documented_options() == table


def test_rows_are_complete(tte):
    options = tte.load_options()
    assert len({option.name for option in options}) == len(options)
    for option in options:
        assert option.accepts and set(option.accepts) <= {bool, int, str}, option
        assert option.type and option.must_be and option.default and option.doc, option
    by_name = {option.name: option for option in options}
    assert by_name["cuda_graphs"].accepts == (bool, int)
    assert by_name["weight_streaming_budget"].accepts == (int, str)
    assert by_name["max_concurrent_runs"].program_only
    assert not by_name["share_engines"].program_only
    assert by_name["max_concurrent_runs"].default == "4"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cuda_graphs=true", ("cuda_graphs", True)),
        ("share_engines=FALSE", ("share_engines", False)),
        ("share_engines=0", ("share_engines", 0)),
        ("max_concurrent_runs=2", ("max_concurrent_runs", 2)),
        ("weight_streaming_budget=8589934592", ("weight_streaming_budget", 8589934592)),
        ("weight_streaming_budget=", ("weight_streaming_budget", "")),
        ("provider=test-host", ("provider", "test-host")),
        ("plugin_libraries=/a.so:/b.so", ("plugin_libraries", "/a.so:/b.so")),
        # A string option keeps digits and words as text.
        ("runtime_cache_path=123", ("runtime_cache_path", "123")),
    ],
)
def test_option_text_takes_the_tables_types(tte, text, expected):
    from torch_tensorrt_executorch_runtime.program.load_options import parse_option_text

    assert parse_option_text(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("cuda_graphs", "expected KEY=VALUE"),
        ("=1", "expected KEY=VALUE"),
        ("num_threads=4", "unknown load option 'num_threads' (known: provider, cuda_graphs"),
        ("cuda_graphs=maybe", "load option 'cuda_graphs' must be a bool, got 'maybe'"),
        ("dla_core=first", "load option 'dla_core' must be an int >= 0 (a DLA core index), got 'first'"),
    ],
)
def test_bad_option_text_says_what_is_wrong(tte, text, message):
    from torch_tensorrt_executorch_runtime.program.load_options import parse_option_text

    with pytest.raises(ValueError) as info:
        parse_option_text(text)
    assert message in str(info.value)


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "torch_tensorrt_executorch_runtime", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_help_lists_every_option(tte):
    result = cli("run", "--help")
    assert result.returncode == 0, result.stderr
    for option in tte.load_options():
        assert f"  {option.name} ({option.type}; default: {option.default})" in result.stdout


def test_run_passes_options_to_the_plugin(programs, host_library):
    result = cli(
        "run", programs["add_one"], "--provider-library", host_library, "--option", "provider=test-host",
        "--option", "share_engines=false", "--option", "max_concurrent_runs=1", "--json", "--numpy",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outputs"][0]["checksum"] == 12.0
    # The option reached the plugin: a provider that does not exist is refused by it.
    missing = cli(
        "run", programs["add_one"], "--provider-library", host_library, "--option", "provider=no-such-provider"
    )
    assert missing.returncode == 1
    assert "no-such-provider" in missing.stderr


def test_run_refuses_a_bad_option_as_a_usage_error(programs):
    result = cli("run", programs["add_one"], "--option", "cuda_graphs=maybe")
    assert result.returncode == 2
    assert "bad --option: load option 'cuda_graphs' must be a bool, got 'maybe'" in result.stderr
