"""One full MCP session with the connector through the official Python SDK (`mcp`), over stdio and over
Streamable HTTP with bearer auth, against the real zoekt-webserver serving a repository made here.

Run by tests/integration/test_python_sdk.sh with the interpreter of the virtualenv that
tests/mcp_python/venv.sh makes:

    python session.py CONNECTOR ZOEKT_BIN_DIR

Prints TAP ("ok N - ...", "not ok N - ...") and ends with the "# pass N", "# fail N" and "# skipped N"
lines tests/run.sh counts; exits 1 when a check failed. No pytest: the SDK and the standard library only.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION

ROOT = Path(os.environ.get("ZK_ROOT", Path(__file__).resolve().parents[2]))
TOOLS = {"corpus_status", "find_dependents", "find_references", "find_symbol", "list_files", "list_repositories",
         "read_file", "search_code"}
REPO = "acme/payments"
PAY_GO = "package payments\n\n// Charge takes the amount in cents.\nfunc Charge(amount int) error {\n\treturn nil\n}\n"
CHARGE_LINE = 4
TOKEN = "python-sdk-test-token"


class Tap:
    def __init__(self):
        self.n = self.passed = self.failed = 0

    def check(self, desc, cond, detail=""):
        self.n += 1
        if cond:
            self.passed += 1
            print(f"ok {self.n} - {desc}", flush=True)
        else:
            self.failed += 1
            print(f"not ok {self.n} - {desc}", flush=True)
            for line in str(detail).splitlines()[-20:]:  # a traceback's message is at its end
                print(f"#   {line}", flush=True)

    def finish(self):
        print(f"1..{self.n}\n# pass {self.passed}\n# fail {self.failed}\n# skipped 0", flush=True)
        return 1 if self.failed else 0


def causes(exc):
    """The exceptions at the leaves of anyio's task-group exception groups: what actually went wrong."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in causes(e)]
    return [exc]


def text_of(result):
    return "\n".join(b.text for b in result.content if b.type == "text")


def start_zoekt(tmp, zoekt_bin):
    """Indexes one git repository as a corpus is (controller/assets/indexer.sh, with the host's
    universal-ctags, so find_symbol has symbols) and serves it with zoekt-webserver on a free loopback
    port; returns (url, process) once the webserver lists the repository."""
    repo, index = tmp / "repo", tmp / "index"
    (repo / "src").mkdir(parents=True)
    (repo / "src/pay.go").write_text(PAY_GO)
    (repo / "README.md").write_text("# payments\n")
    subprocess.run([ROOT / "tests/support/zoekt.sh", "repo", tmp, "repo"], check=True)
    (tmp / "repositories.txt").write_text(f"{REPO} file://{repo} main\n")
    env = dict(os.environ, REPOS_FILE=str(tmp / "repositories.txt"), DATA_DIR=str(tmp / "data"),
               INDEX_DIR=str(index), WORK_DIR=str(tmp / "indexer-work"), CREDENTIALS_DIR=str(tmp / "none"),
               TERMINATION_LOG=str(tmp / "termination-log"), ZOEKT_GIT_INDEX=str(Path(zoekt_bin) / "zoekt-git-index"))
    subprocess.run(["sh", ROOT / "controller/assets/indexer.sh"], check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    port = subprocess.run([ROOT / "scripts/free-port.sh"], check=True, capture_output=True, text=True).stdout.strip()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([Path(zoekt_bin) / "zoekt-webserver", "-index", index, "-listen", f"127.0.0.1:{port}",
                             "-rpc"], stdout=subprocess.DEVNULL, stderr=open(tmp / "zoekt.log", "w"))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"zoekt-webserver exited: {(tmp / 'zoekt.log').read_text()}")
        try:
            req = urllib.request.Request(f"{url}/api/list", data=b'{"Q":""}', method="POST")
            with urllib.request.urlopen(req, timeout=2) as res:
                if (json.load(res).get("List") or {}).get("Repos"):
                    return url, proc
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("zoekt-webserver did not list the repository in 20 s")


def start_http_connector(tmp, connector, zoekt_url):
    """Starts the connector on --listen 127.0.0.1:PORT with a token file; returns (url, process, log)."""
    tokens = tmp / "tokens"
    tokens.write_text(f"# accepted tokens\n{TOKEN}\n")
    port = subprocess.run([ROOT / "scripts/free-port.sh"], check=True, capture_output=True, text=True).stdout.strip()
    log = tmp / "connector-http.log"
    proc = subprocess.Popen([connector, "--listen", f"127.0.0.1:{port}", "--token-file", tokens,
                             "--zoekt-url", zoekt_url], stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"zoekt-connector exited: {log.read_text()}")
        if "Serving MCP over Streamable HTTP" in log.read_text():
            return f"http://127.0.0.1:{port}", proc, log
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"zoekt-connector did not start listening in 20 s: {log.read_text()}")


async def full_session(tap, session, via):
    """initialize, tools/list, every tool once and one bad call, checked as a client sees them."""
    init = await session.initialize()
    tap.check(f"{via}: initialize negotiates {LATEST_HANDSHAKE_VERSION}, the SDK's newest",
              init.protocol_version == LATEST_HANDSHAKE_VERSION, init.protocol_version)
    tap.check(f"{via}: serverInfo names zoekt-connector with a version",
              init.server_info.name == "zoekt-connector" and bool(init.server_info.version), init.server_info)
    tap.check(f"{via}: instructions are present and point at search_code",
              "search_code" in (init.instructions or ""), init.instructions)

    tools = (await session.list_tools()).tools
    names = {t.name for t in tools}
    tap.check(f"{via}: tools/list offers {', '.join(sorted(TOOLS))}", TOOLS <= names, sorted(names))
    bad = [t.name for t in tools if not (isinstance(t.input_schema, dict) and t.input_schema.get("type") == "object")]
    tap.check(f"{via}: every tool's inputSchema is an object schema", tools and not bad, bad)

    res = await session.call_tool("search_code", {"query": r"func Charge\(amount"})
    files = (res.structured_content or {}).get("files", [])
    hits = [(f["repository"], f["path"], m["line"]) for f in files for m in f.get("matches", [])]
    tap.check(f"{via}: search_code finds the known line in structuredContent",
              not res.is_error and hits == [(REPO, "src/pay.go", CHARGE_LINE)], f"{hits}\n{text_of(res)}")
    tap.check(f"{via}: search_code's text shows the file and the line",
              f"{REPO}/src/pay.go" in text_of(res) and "func Charge(amount int) error" in text_of(res), text_of(res))

    path = files[0]["path"] if files else "src/pay.go"
    res = await session.call_tool("read_file", {"repo": REPO, "path": path})
    text = text_of(res)
    tap.check(f"{via}: read_file of the found path shows its numbered lines",
              not res.is_error and f"\n{CHARGE_LINE}: func Charge(amount int) error {{\n" in text
              and (res.structured_content or {}).get("totalLines") == PAY_GO.count("\n"), text)

    res = await session.call_tool("find_symbol", {"name": "Charge"})
    defs = [(f["repository"], f["path"], d["line"], d["kind"]) for f in (res.structured_content or {}).get("files", [])
            for d in f.get("definitions", [])]
    tap.check(f"{via}: find_symbol finds the definition with its kind",
              not res.is_error and defs == [(REPO, "src/pay.go", CHARGE_LINE, "func")]
              and f"\n{CHARGE_LINE} func Charge (in package payments): func Charge(amount int) error" in text_of(res),
              f"{defs}\n{text_of(res)}")

    res = await session.call_tool("find_references", {"symbol": "Charge"})
    counts = [(r["repository"], r["matchingLines"]) for r in (res.structured_content or {}).get("repositories", [])]
    tap.check(f"{via}: find_references counts the lines that use the identifier",
              not res.is_error and counts == [(REPO, 2)] and f"D {CHARGE_LINE}: func Charge" in text_of(res),
              f"{counts}\n{text_of(res)}")

    res = await session.call_tool("list_files", {"repo": REPO})
    paths = [f["path"] for f in (res.structured_content or {}).get("files", [])]
    tap.check(f"{via}: list_files lists the repository's files by path",
              not res.is_error and paths == ["README.md", "src/pay.go"], f"{paths}\n{text_of(res)}")

    res = await session.call_tool("list_repositories", {})
    listed = [r["name"] for r in (res.structured_content or {}).get("repositories", [])]
    tap.check(f"{via}: list_repositories lists the indexed repository",
              not res.is_error and listed == [REPO] and REPO in text_of(res), f"{listed}\n{text_of(res)}")

    # Without a cluster corpus_status reports what the webserver itself serves.
    res = await session.call_tool("corpus_status", {})
    index = (res.structured_content or {}).get("index", {})
    tap.check(f"{via}: corpus_status reports the webserver's repositories and shards",
              not res.is_error and index.get("repositories") == 1 and "Search webserver http://127.0.0.1:" in text_of(res),
              text_of(res))

    # A mistake in the arguments is the model's to fix: a tool result with isError, not a JSON-RPC error
    # (which the SDK would raise).
    try:
        res = await session.call_tool("search_code", {"query": "Charge", "max_result": 5})
        tap.check(f"{via}: an unknown argument is an isError result naming it and the known ones",
                  res.is_error and 'unknown argument "max_result"' in text_of(res) and "max_files" in text_of(res),
                  text_of(res))
    except Exception as e:  # a protocol error is what this check must catch
        tap.check(f"{via}: an unknown argument is an isError result, not a protocol error", False, repr(e))


async def over_stdio(tap, tmp, connector, zoekt_url):
    # The SDK starts and stops the connector itself; the wrapper only records how the connector ended.
    status = tmp / "stdio.status"
    wrapper = ['-c', '"$0" "$@"; echo $? >"$STATUS_FILE"', str(connector), "--stdio", "--zoekt-url", zoekt_url]
    params = StdioServerParameters(command="/bin/sh", args=wrapper, env={"STATUS_FILE": str(status)})
    with open(tmp / "connector-stdio.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await full_session(tap, session, "stdio")
    for _ in range(100):  # the SDK waits for the process; the wrapper writes just before it exits
        if status.exists() and status.read_text().strip():
            break
        await anyio.sleep(0.05)
    code = status.read_text().strip() if status.exists() else "(still running)"
    tap.check("stdio: closing the SDK client ends the connector with status 0", code == "0",
              f"status {code}\n{(tmp / 'connector-stdio.log').read_text()[-2000:]}")


async def over_http(tap, tmp, connector, zoekt_url):
    url, proc, log = start_http_connector(tmp, connector, zoekt_url)
    try:
        try:
            urllib.request.urlopen(urllib.request.Request(f"{url}/mcp", data=b"{}", method="POST"), timeout=10)
            refused = None
        except urllib.error.HTTPError as e:
            refused = e.code
        tap.check("http: /mcp without the bearer token is refused with 401", refused == 401, refused)

        seen = []  # (method, status, session id) of every response the SDK got

        async def record(response):
            seen.append((response.request.method, response.status_code, response.headers.get("mcp-session-id")
                         or response.request.headers.get("mcp-session-id")))

        # The SDK's documented way to add headers: an HTTP client of one's own, handed to the transport.
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30,
                                      event_hooks={"response": [record]}) as http:
            async with streamable_http_client(f"{url}/mcp", http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await full_session(tap, session, "http")
        sid = next((s for _, _, s in seen if s), None)
        tap.check("http: closing the SDK client ends the session with DELETE (204)",
                  sid is not None and ("DELETE", 204, sid) in seen, seen)

        # The ended session is gone for good: a request on it must initialize again.
        async with httpx2.AsyncClient() as plain:
            res = await plain.post(f"{url}/mcp", headers={"Authorization": f"Bearer {TOKEN}", "Mcp-Session-Id": sid or "",
                                                          "Accept": "application/json, text/event-stream",
                                                          "Content-Type": "application/json"},
                                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        tap.check("http: the deleted session is unknown afterwards (404)", res.status_code == 404, res.text)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = "(killed after 10 s)"
    tap.check("http: SIGTERM stops the connector with status 0", code == 0, f"status {code}\n{log.read_text()[-2000:]}")


async def main(connector, zoekt_bin):
    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="zk-pysdk-") as d:
        tmp = Path(d)
        zoekt_url, zoekt = start_zoekt(tmp, zoekt_bin)
        try:
            for run in (over_stdio, over_http):
                try:
                    with anyio.fail_after(120):
                        await run(tap, tmp, connector, zoekt_url)
                except Exception as e:  # a crash in one transport is one failure, and the other still runs
                    tap.check(f"{run.__name__}: the session ran to its end", False,
                              "\n".join("".join(traceback.format_exception(c)) for c in causes(e)))
        finally:
            zoekt.kill()
            zoekt.wait()
    return tap.finish()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: session.py CONNECTOR ZOEKT_BIN_DIR")
    sys.exit(anyio.run(main, sys.argv[1], sys.argv[2]))
