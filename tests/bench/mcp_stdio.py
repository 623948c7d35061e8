"""The release connector over stdio as the bench scripts drive it: JSON-RPC lines in and out, one call
at a time. Not the official SDK (tests/mcp and tests/mcp_python use that): the scripts time and count
the connector itself, so they keep the client to a write and a read."""
import json
import subprocess


class Connector:
    def __init__(self, binary, zoekt, client):
        """Starts binary against the Zoekt at zoekt and initializes the session; client names the
        caller in clientInfo and in the error a failed call exits with."""
        self.client = client
        self.proc = subprocess.Popen([binary, '--stdio', '--zoekt-url', zoekt, '--mirror-prefix', 'mirrors/',
                                      '--log-level', 'warn'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.id = 0
        self.call('initialize', {'protocolVersion': '2025-06-18', 'capabilities': {},
                                 'clientInfo': {'name': client, 'version': '1'}})

    def call(self, method, params):
        self.id += 1
        self.proc.stdin.write(json.dumps({'jsonrpc': '2.0', 'id': self.id, 'method': method,
                                          'params': params}).encode() + b'\n')
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if 'result' not in reply:
            raise SystemExit(f'{self.client}.py: {method}: {reply}')
        return reply['result']

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
