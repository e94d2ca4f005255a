"""A download the network keeps cutting short: scripts/fetch-file.py goes on from the bytes it has
under a URL no cache has seen, and checks what it got; scripts/pip-refetch.py hands such a file to
pip when pip's own download was cut short. Against a local HTTP server that cuts every transfer of
a plain URL at the same byte, as a cache in CI did, and serves URLs with a query whole; pip is a
stand-in script that records its commands."""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
FETCH_FILE = ROOT / "scripts" / "fetch-file.py"
PIP_REFETCH = ROOT / "scripts" / "pip-refetch.py"

CONTENT = bytes(range(256)) * 400  # 102,400 bytes
CUT_AT = 40_000
NAME = "demo_pkg-1.0-py3-none-any.whl"


def pypi_path(content: bytes, name: str = NAME) -> str:
    """The path PyPI would give `content`: /packages/ab/cd/<60 hex>/NAME, from its BLAKE2b-256 digest."""
    digest = hashlib.blake2b(content, digest_size=32).hexdigest()
    return f"/packages/{digest[:2]}/{digest[2:4]}/{digest[4:]}/{name}"


class Server:
    """Serves `content` at any path (and, with `index`, that HTML page at /simple/...); a request
    without a query is cut at CUT_AT bytes when `cut`."""

    def __init__(self, content: bytes, cut: bool, index: str = "") -> None:
        self.content, self.cut, self.index, self.requests = content, cut, index, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                if server.index and self.path.startswith("/simple/"):
                    page = server.index.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return
                query = urlsplit(self.path).query
                ranged = self.headers.get("Range")
                server.requests.append({"query": query, "range": ranged})
                start = int(ranged.split("=")[1].split("-")[0]) if ranged else 0
                body = server.content[start:]
                self.send_response(206 if ranged else 200)
                if ranged:
                    self.send_header("Content-Range", f"bytes {start}-{len(server.content) - 1}/{len(server.content)}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if server.cut and not query:
                    self.wfile.write(body[:max(0, CUT_AT - start)])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(content: bytes = CONTENT, cut: bool = True, index: str = "") -> Server:
        servers.append(Server(content, cut, index))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def fetch(url: str, dest: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(FETCH_FILE), url, str(dest), *extra],
                          capture_output=True, text=True, timeout=120, check=False)


# ---- scripts/fetch-file.py ------------------------------------------------------------------

def test_a_whole_file_is_fetched_and_checked_against_its_pypi_digest(serve, tmp_path: Path) -> None:
    server = serve(cut=False)
    dest = tmp_path / NAME
    result = fetch(server.url(pypi_path(CONTENT)), dest)
    assert result.returncode == 0, result.stderr
    assert dest.read_bytes() == CONTENT
    assert not (tmp_path / (NAME + ".part")).exists()
    assert [r["query"] for r in server.requests] == [""]


def test_a_transfer_cut_short_goes_on_from_its_bytes_under_an_uncached_url(serve, tmp_path: Path) -> None:
    server = serve(cut=True)
    dest = tmp_path / NAME
    url = server.url(pypi_path(CONTENT))
    first = fetch(url, dest)
    assert first.returncode == 1
    assert (tmp_path / (NAME + ".part")).stat().st_size == CUT_AT
    assert f"with {CUT_AT} bytes" in first.stderr and not dest.exists()
    second = fetch(url, dest)
    assert second.returncode == 0, second.stderr
    assert f"going on from byte {CUT_AT}" in second.stderr
    assert dest.read_bytes() == CONTENT
    assert server.requests[1]["query"].startswith("refetch=")
    assert server.requests[1]["range"] == f"bytes={CUT_AT}-"


def test_fresh_asks_for_an_uncached_url_at_once(serve, tmp_path: Path) -> None:
    server = serve(cut=True)
    result = fetch(server.url(pypi_path(CONTENT)), tmp_path / NAME, "--fresh")
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 1 and server.requests[0]["query"].startswith("refetch=")


def test_bytes_that_are_not_the_file_the_pypi_url_names_are_deleted(serve, tmp_path: Path) -> None:
    server = serve(content=CONTENT[:-1] + b"\x00", cut=False)
    dest = tmp_path / NAME
    result = fetch(server.url(pypi_path(CONTENT)), dest)
    assert result.returncode == 1
    assert "the URL's path says" in result.stderr
    assert not dest.exists() and not (tmp_path / (NAME + ".part")).exists()


def test_a_sha256_given_is_checked(serve, tmp_path: Path) -> None:
    server = serve(cut=False)
    wrong = hashlib.sha256(b"something else").hexdigest()
    result = fetch(server.url("/files/" + NAME), tmp_path / NAME, "--sha256", wrong)
    assert result.returncode == 1 and f"expected {wrong}" in result.stderr
    right = hashlib.sha256(CONTENT).hexdigest()
    result = fetch(server.url("/files/" + NAME), tmp_path / NAME, "--sha256", right)
    assert result.returncode == 0, result.stderr


def test_a_file_already_there_and_sound_is_not_fetched(serve, tmp_path: Path) -> None:
    server = serve(cut=False)
    dest = tmp_path / NAME
    dest.write_bytes(CONTENT)
    result = fetch(server.url(pypi_path(CONTENT)), dest)
    assert result.returncode == 0 and server.requests == []


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    assert fetch("ftp://example.invalid/x.whl", tmp_path / "x").returncode == 2
    assert fetch("https://example.invalid/x.whl", tmp_path / "x", "--sha256", "abc").returncode == 2


# ---- scripts/pip-refetch.py -----------------------------------------------------------------

# What pip 26 printed in CI when every attempt stopped at the same byte.
PIP_CUT_SHORT = """\
error: incomplete-download

\u00d7 Download failed after 6 attempts because not enough bytes were received (24.1 MB/27.3 MB)
\u2570\u2500> URL: {url}

note: This is an issue with network connectivity, not pip.
"""

FAKE_PIP = """\
import json, os, pathlib, sys
args = sys.argv[1:]
log = pathlib.Path(os.environ["FAKE_PIP_LOG"])
calls = json.loads(log.read_text()) if log.exists() else []
log.write_text(json.dumps(calls + [args]))
url = os.environ["FAKE_PIP_URL"]
name = url.rsplit("/", 1)[1]
installed = log.with_name("installed")
if args[2] == "download" and (pathlib.Path(args[args.index("-d") + 1]) / name).exists():
    sys.exit(0)
if args[2] == "install" and "--no-deps" in args and args[-1].endswith(name):
    installed.write_text(pathlib.Path(args[-1]).read_bytes().hex()[:16])
    sys.exit(0)
if args[2] == "install" and installed.exists():
    sys.exit(0)
sys.stderr.write(os.environ["FAKE_PIP_ERROR"].format(url=url))
sys.exit(1)
"""


def pip_refetch(tmp_path: Path, url: str, pip_args: list[str], error: str = PIP_CUT_SHORT):
    """Run pip-refetch over the stand-in pip; returns the result and the pip commands it ran."""
    fake = tmp_path / "python"
    fake.write_text(f"#!{sys.executable}\n{FAKE_PIP}")
    fake.chmod(0o755)
    env = dict(os.environ, FAKE_PIP_LOG=str(tmp_path / "calls.json"), FAKE_PIP_URL=url,
               FAKE_PIP_ERROR=error, TTE_REFETCHED_DIR=str(tmp_path / "refetched"))
    result = subprocess.run([sys.executable, str(PIP_REFETCH), str(fake), "-m", "pip", *pip_args],
                            capture_output=True, text=True, env=env, timeout=120, check=False)
    log = tmp_path / "calls.json"
    return result, (json.loads(log.read_text()) if log.exists() else [])


def test_a_download_cut_short_is_fetched_again_into_pips_download_folder(serve, tmp_path: Path) -> None:
    server = serve(cut=True)
    url = server.url(pypi_path(CONTENT))
    downloads = tmp_path / "downloads"
    result, calls = pip_refetch(tmp_path, url, ["download", "-q", "--no-deps", "-d", str(downloads), "demo-pkg"])
    assert result.returncode == 0, result.stderr
    assert (downloads / NAME).read_bytes() == CONTENT
    assert len(calls) == 2 and calls[0] == calls[1]  # the command, then the same command again
    assert "incomplete-download" in result.stderr  # pip's own output passes through
    assert "fetching it again: " + url in result.stderr
    assert server.requests[0]["query"].startswith("refetch=")


def test_an_install_cut_short_installs_the_file_alone_where_the_command_installs(serve, tmp_path: Path) -> None:
    server = serve(cut=True)
    url = server.url(pypi_path(CONTENT))
    target = tmp_path / "site"
    result, calls = pip_refetch(tmp_path, url, ["install", "-q", f"--target={target}", "--user", "demo-pkg==1.0"])
    assert result.returncode == 0, result.stderr
    handoff = calls[1]
    assert handoff[:6] == ["-m", "pip", "install", "-q", "--no-deps", "--target"]
    assert handoff[6:8] == [str(target), "--user"] and handoff[-1].endswith("/" + NAME)
    assert (tmp_path / "installed").read_text() == CONTENT.hex()[:16]
    assert calls[2] == calls[0] and len(calls) == 3


def test_another_failure_is_pips_answer_unchanged(serve, tmp_path: Path) -> None:
    server = serve(cut=True)
    result, calls = pip_refetch(tmp_path, server.url(pypi_path(CONTENT)), ["install", "-q", "nothing-such"],
                                error="ERROR: No matching distribution found for nothing-such\n")
    assert result.returncode == 1 and len(calls) == 1 and server.requests == []
    assert "No matching distribution" in result.stderr and "pip-refetch" not in result.stderr


def test_a_file_that_cannot_be_fetched_again_leaves_pips_failure(serve, tmp_path: Path) -> None:
    server = serve(content=b"not the file", cut=False)
    result, calls = pip_refetch(tmp_path, server.url(pypi_path(CONTENT)),
                                ["download", "-d", str(tmp_path / "d"), "demo-pkg"])
    assert result.returncode == 1 and len(calls) == 1
    assert "could not fetch it again" in result.stderr


def test_other_pip_commands_are_usage_errors(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(PIP_REFETCH), sys.executable, "-m", "pip", "wheel", "x"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "Usage" in result.stderr


def test_pips_message_is_read_for_every_url_it_names() -> None:
    spec = importlib.util.spec_from_file_location("pip_refetch_under_test", PIP_REFETCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = PIP_CUT_SHORT.format(url="https://h/a.whl") + PIP_CUT_SHORT.format(url="https://h/b.whl")
    assert module.cut_short_urls(text) == ["https://h/a.whl", "https://h/b.whl"]
    assert module.cut_short_urls("ERROR: HTTP error 404 while getting https://h/a.whl\nURL: https://h/a.whl") == []
    assert module.option_values(["-d", "x", "--dest=y", "-dz"], ("--dest", "-d")) == [
        ("-d", "x"), ("--dest", "y"), ("-d", "z")]


def small_wheel() -> bytes:
    """A wheel pip accepts, of demo-pkg 1.0, larger than CUT_AT (a stored file of random bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as whl:
        whl.writestr("demo_pkg/__init__.py", "")
        whl.writestr(zipfile.ZipInfo("demo_pkg/data.bin"), os.urandom(3 * CUT_AT))
        whl.writestr("demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
        whl.writestr("demo_pkg-1.0.dist-info/WHEEL",
                     "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr("demo_pkg-1.0.dist-info/RECORD", "")
    return buffer.getvalue()


def test_real_pips_cut_short_download_is_recognised_and_fetched_again(serve, tmp_path: Path) -> None:
    """The pip of this environment, from a local index whose file every plain request cuts at the
    same byte: pip fails with its own message, pip-refetch reads it, and pip's rerun takes the file."""
    content = small_wheel()
    path = pypi_path(content)
    server = serve(content=content, cut=True, index=f'<html><body><a href="{path}">{NAME}</a></body></html>')
    downloads = tmp_path / "downloads"
    env = dict(os.environ, TTE_REFETCHED_DIR=str(tmp_path / "refetched"))
    result = subprocess.run(
        [sys.executable, str(PIP_REFETCH), sys.executable, "-m", "pip", "download", "--isolated", "-q",
         "--no-deps", "--resume-retries", "1", "--index-url", server.url("/simple"), "-d", str(downloads),
         "demo-pkg==1.0"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "incomplete-download" in result.stderr and "fetching it again" in result.stderr
    assert (downloads / NAME).read_bytes() == content
