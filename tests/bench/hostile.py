#!/usr/bin/env python3
"""Hostile clients against a corpus's gateway, for tests/bench/hostile.sh (docs/security.md, "Hostile
clients"). Four kinds run side by side for --seconds, each reconnecting as soon as the server drops it:

  slow-header  connections that send a request header a byte every --drip seconds and never finish it
  slow-body    POST /mcp with the token and a 64 KiB Content-Length, the body a byte every --drip s
  session      initialize without a session, as fast as the answers come (--session-workers at once)
  batch        one 2025-03-26 session sending batches of 32 tools/list, and of 33 (over the bound)

Prints one JSON object: per kind, what was sent and how the server answered (HTTP statuses, the
connections it closed, the reply bytes), so the caller can show that the bounds held. Standard library
only: it runs wherever the tests run.
"""
import argparse
import asyncio
import json
import time
import urllib.parse
from collections import Counter

BATCH_OK = 32  # connector/mcp/server.h, MCP_BATCH_MAX


def counters():
    return {"opened": 0, "closed_by_server": 0, "statuses": Counter(), "requests": 0, "reply_bytes": 0}


async def read_response(reader):
    """Reads one HTTP/1.1 response; returns (status, body bytes)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        if line.lower().startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    body = await reader.readexactly(length) if length else b""
    return status, body


async def drip(host, port, head, body_len, stop, drip_s, c):
    """One connection that sends head at once, then a byte every drip_s seconds (of a body of body_len
    bytes, or of a header that never ends); reconnects when the server closes it."""
    async for reader, writer in connections(host, port, stop, c):
        try:
            writer.write(head)
            await writer.drain()
            sent = 0
            while time.monotonic() < stop and (body_len == 0 or sent < body_len - 1):
                try:
                    data = await asyncio.wait_for(reader.read(4096), timeout=drip_s)
                    if not data:
                        c["closed_by_server"] += 1
                        break
                    c["statuses"][data.split(b" ", 2)[1].decode("latin-1", "replace") if data.startswith(b"HTTP/") else "other"] += 1
                except asyncio.TimeoutError:
                    pass
                writer.write(b"a")
                await writer.drain()
                sent += 1
        except (OSError, asyncio.IncompleteReadError):
            c["closed_by_server"] += 1
        finally:
            writer.close()


async def connections(host, port, stop, c):
    """A new connection each time the caller is done with the last one, until stop; counted in c."""
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.5)
            continue
        c["opened"] += 1
        yield reader, writer


def post(path, host, body, token, session=None, version=None):
    h = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json",
         "Accept: application/json, text/event-stream", f"Authorization: Bearer {token}",
         f"Content-Length: {len(body)}"]
    if session:
        h.append(f"Mcp-Session-Id: {session}")
    if version:
        h.append(f"MCP-Protocol-Version: {version}")
    return ("\r\n".join(h) + "\r\n\r\n").encode() + body


def initialize(version):
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}).encode()


async def session_flood(host, port, path, token, stop, c):
    """initialize after initialize on one keep-alive connection, reconnecting when it closes."""
    async for reader, writer in connections(host, port, stop, c):
        try:
            while time.monotonic() < stop:
                writer.write(post(path, host, initialize("2025-06-18"), token))
                await writer.drain()
                status, body = await read_response(reader)
                c["requests"] += 1
                c["statuses"][str(status)] += 1
                c["reply_bytes"] += len(body)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            c["closed_by_server"] += 1
        finally:
            writer.close()


async def batch_flood(host, port, path, token, stop, c):
    """Batches of tools/list in one 2025-03-26 session: BATCH_OK of them, then one more than the bound."""
    async for reader, writer in connections(host, port, stop, c):
        try:
            writer.write(post(path, host, initialize("2025-03-26"), token))
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            session = None
            length = 0
            for line in head.decode("latin-1").split("\r\n"):
                if line.lower().startswith("mcp-session-id:"):
                    session = line.split(":", 1)[1].strip()
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            await reader.readexactly(length)
            if not session:
                c["statuses"]["no-session"] += 1
                await asyncio.sleep(1)
                continue
            n = 0
            while time.monotonic() < stop:
                size = BATCH_OK if n % 2 == 0 else BATCH_OK + 1
                batch = json.dumps([{"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(size)]).encode()
                writer.write(post(path, host, batch, token, session, "2025-03-26"))
                await writer.drain()
                status, body = await read_response(reader)
                c["requests"] += 1
                c["statuses"][f"{status}/{size}"] += 1
                c["reply_bytes"] += len(body)
                n += 1
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            c["closed_by_server"] += 1
        finally:
            writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True, help="the corpus's /mcp URL")
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--drip", type=float, default=5)
    ap.add_argument("--slow-headers", type=int, default=600)
    ap.add_argument("--slow-bodies", type=int, default=60)
    ap.add_argument("--session-workers", type=int, default=4)
    ap.add_argument("--batch-workers", type=int, default=2)
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    host, port, path = u.hostname, u.port or 80, u.path or "/mcp"
    token = open(a.token_file).read().strip()
    stop = time.monotonic() + a.seconds
    kinds = {k: counters() for k in ("slow-header", "slow-body", "session", "batch")}
    slow_head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nX-Slow: ".encode()
    slow_body = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                 f"Authorization: Bearer {token}\r\nContent-Length: 65536\r\n\r\n").encode()
    tasks = [drip(host, port, slow_head, 0, stop, a.drip, kinds["slow-header"]) for _ in range(a.slow_headers)]
    tasks += [drip(host, port, slow_body, 65536, stop, a.drip, kinds["slow-body"]) for _ in range(a.slow_bodies)]
    tasks += [session_flood(host, port, path, token, stop, kinds["session"]) for _ in range(a.session_workers)]
    tasks += [batch_flood(host, port, path, token, stop, kinds["batch"]) for _ in range(a.batch_workers)]
    await asyncio.gather(*tasks)
    print(json.dumps({k: {**v, "statuses": dict(v["statuses"])} for k, v in kinds.items()}, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
