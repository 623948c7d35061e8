#!/usr/bin/env python3
"""Agent tasks over the organisation corpus: is the first call right, and what does finishing cost?

    tasks.py --connector BIN [--baseline BIN] --zoekt URL --src DIR --modules FILE

The corpus is tests/bench/corpus.sh's (each line of FILE a module path, DIR/<path> its git repository
on branch main, served by Zoekt as mirrors/<path>). Each task is what an agent working on Go services
asks, the call an agent writes first for it (as it writes it: code pasted as is, a short repository
name, a glob), and its truth, from git over the same repositories: the files `git grep` finds (ripgrep's
reading of the pattern: -F, -E, -w as noted), the files `git ls-tree` lists, the repositories, or the
lines of a file.

A task is right first time when the first answer is no error and shows every file of the truth (for
read_file, every line asked for). When it does not, the agent goes on as the connector lets it, asking
for the largest page (max_files; limit for list_repositories): the next page with the cursor the answer
gave, or, where the answer gives none (an older connector), the same call once more, which resends
what was shown. It stops when the truth is seen or after 10 calls. Reported per task and in all: right first
time, calls, and bytes of text (the content agents read) until done, for the connector and, with
--baseline, an older one (the same tasks, the same Zoekt, in the same run).

Prints Markdown table rows (tests/bench/run.sh puts them into docs/benchmarks.md), then the lines
"CATALOGUE <bytes of tools/list> [<the baseline's>]" and "TASKS <right first time> <total> [<the
baseline's right first time>]".
"""
import argparse
import json
import subprocess
import sys

import mcp_stdio

# (name, what the agent wants, tool, arguments, truth). Truth: ('grep', flags, pattern, repositories or
# None for all[, pathspec]), ('ls', repository, path or '' for all, file-name suffix or ''), ('repos',
# substring), ('lines', repository, path, first, last).
TASKS = [
    ('grpc-newserver', 'where grpc.NewServer is defined', 'search_code',
     {'query': 'func NewServer(', 'repo': 'grpc'}, ('grep', ['-F'], 'func NewServer(', ['google.golang.org/grpc'])),
    ('sleep-5s', 'every five-second sleep', 'search_code',
     {'query': 'time.Sleep(5 * time.Second)'}, ('grep', ['-F'], 'time.Sleep(5 * time.Second)', None)),
    ('getenv-home', 'who reads $HOME', 'search_code',
     {'query': 'os.Getenv("HOME")'}, ('grep', ['-F'], 'os.Getenv("HOME")', None)),
    ('with-timeout', 'every context.WithTimeout call', 'search_code',
     {'query': 'context.WithTimeout('}, ('grep', ['-F'], 'context.WithTimeout(', None)),
    ('listen-and-serve', 'HTTP servers started with ListenAndServe', 'search_code',
     {'query': 'http.ListenAndServe('}, ('grep', ['-F'], 'http.ListenAndServe(', None)),
    ('router-servehttp', "mux's Router.ServeHTTP", 'search_code',
     {'query': 'func (r *Router) ServeHTTP'}, ('grep', ['-F'], 'func (r *Router) ServeHTTP', None)),
    ('errors-wrapf', 'callers of errors.Wrapf', 'search_code',
     {'query': 'errors.Wrapf('}, ('grep', ['-F'], 'errors.Wrapf(', None)),
    ('server-serve', 'methods Serve on a *Server', 'search_code',
     {'query': r'func \(s \*Server\) Serve\('}, ('grep', ['-E'], r'func \(s \*Server\) Serve\(', None)),
    ('waitgroup-prom', 'WaitGroups in the Prometheus client', 'search_code',
     {'query': 'sync.WaitGroup', 'repo': 'client_golang'},
     ('grep', ['-F'], 'sync.WaitGroup', ['github.com/prometheus/client_golang'])),
    ('proto-services', 'gRPC services declared in .proto files', 'search_code',
     {'query': r'^service [A-Za-z]+ \{', 'file': '*.proto'}, ('grep', ['-E'], r'^service [A-Za-z]+ \{', None)),
    ('interface-mux', 'empty interfaces in gorilla/mux', 'search_code',
     {'query': 'interface{}', 'repo': 'mux'}, ('grep', ['-F'], 'interface{}', ['github.com/gorilla/mux'])),
    ('go-mod-files', 'every go.mod', 'search_code',
     {'file': 'go.mod'}, ('ls', None, '', 'go.mod')),
    ('refs-newrouter', 'uses of NewRouter', 'find_references',
     {'symbol': 'NewRouter'}, ('grep', ['-F', '-w'], 'NewRouter', None)),
    ('refs-errnorows', 'uses of ErrNoRows', 'find_references',
     {'symbol': 'ErrNoRows'}, ('grep', ['-F', '-w'], 'ErrNoRows', None)),
    ('refs-mustregister', 'uses of MustRegister', 'find_references',
     {'symbol': 'MustRegister'}, ('grep', ['-F', '-w'], 'MustRegister', None)),
    ('files-mux', 'the files of gorilla/mux', 'list_files',
     {'repo': 'gorilla/mux'}, ('ls', 'github.com/gorilla/mux', '', '')),
    ('files-http2', "x/net's http2 folder", 'list_files',
     {'repo': 'golang.org/x/net', 'path': 'http2'}, ('ls', 'golang.org/x/net', 'http2/', '')),
    ('repos-jackc', 'the jackc repositories', 'list_repositories',
     {'filter': 'jackc'}, ('repos', 'jackc')),
    ('repos-all', 'every repository', 'list_repositories', {}, ('repos', '')),
    ('consumers-testify', 'the modules that require testify', 'find_dependents',
     {'package': 'github.com/stretchr/testify'},
     ('grep', ['-E'], r'^\s*(require\s+)?github\.com/stretchr/testify(/v[0-9]+)?\s+v[0-9]', None, ':(glob)**/go.mod')),
    ('read-mux', "the top of mux's mux.go", 'read_file',
     {'repo': 'gorilla/mux', 'path': 'mux.go', 'start_line': 1, 'end_line': 60},
     ('lines', 'github.com/gorilla/mux', 'mux.go', 1, 60)),
]

MAX_CALLS = 10
BIGGER = {'search_code': ('max_files', 200), 'find_references': ('max_files', 200), 'find_dependents': ('max_files', 1000),
          'list_files': ('max_files', 1000), 'list_repositories': ('limit', 1000)}


def git(repo, *args):
    out = subprocess.run(['git', '-C', repo, *args], capture_output=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f'tasks.py: git -C {repo} {" ".join(args)}: {out.stderr.decode(errors="replace")}')
    return out.stdout.decode(errors='replace')


def truth_of(task, src, modules):
    """The set of what an answer must show: repository/path names, repository names, or line numbers."""
    kind = task[0]
    if kind == 'grep':
        _, flags, pattern, repos, *paths = task
        return {f'{m}/{p}' for m in (repos or modules)
                for p in git(f'{src}/{m}', 'grep', '-I', '-l', *flags, '-e', pattern, 'main', '--', *paths).splitlines()
                for p in [p.split(':', 1)[1]]}
    if kind == 'ls':
        _, repo, path, suffix = task
        return {f'{m}/{p}' for m in ([repo] if repo else modules)
                for p in git(f'{src}/{m}', 'ls-tree', '-r', '--name-only', 'main', '--', *([path] if path else [])).splitlines()
                if p.split('/')[-1].endswith(suffix) and (suffix == '' or p.split('/')[-1] == suffix)}
    if kind == 'repos':
        return {m for m in modules if task[1] in m}
    _, repo, path, first, last = task
    return set(range(first, last + 1))


def shown(tool, res):
    """What one answer showed, in the terms of truth_of."""
    sc = res.get('structuredContent') or {}
    if tool == 'list_repositories':
        return {r['name'] for r in sc.get('repositories', [])}
    if tool == 'read_file':
        return set(range(sc.get('startLine', 0), sc.get('endLine', -1) + 1))
    if tool == 'find_dependents':
        return {f'{d["repository"]}/{d["path"]}' for d in sc.get('dependents', [])}
    return {f'{f["repository"]}/{f["path"]}' for f in sc.get('files', [])}


class Connector(mcp_stdio.Connector):
    def __init__(self, binary, zoekt):
        super().__init__(binary, zoekt, 'tasks')

    def tool(self, name, args):
        return self.call('tools/call', {'name': name, 'arguments': args})

    def catalogue(self):
        """The bytes of the tools/list result, as a client receives it (compact JSON), and the tools' names."""
        listed = self.call('tools/list', {})
        return len(json.dumps(listed, separators=(',', ':')).encode()), {t['name'] for t in listed['tools']}


def run(conn, tool, args, truth):
    """(right first time, calls, bytes, done) of one task."""
    seen, calls, size, bigger, first = set(), 0, 0, False, False
    res = None
    while calls < MAX_CALLS:
        if res is None:
            call = args
        elif (res.get('structuredContent') or {}).get('nextCursor'):
            call = {**args, 'cursor': res['structuredContent']['nextCursor']}
            if tool in BIGGER:
                call[BIGGER[tool][0]] = BIGGER[tool][1]
        elif tool in BIGGER and not bigger:
            key, value = BIGGER[tool]
            call, bigger = {**args, key: value}, True
        else:
            break
        res = conn.tool(tool, call)
        calls += 1
        size += sum(len(c.get('text', '').encode()) for c in res.get('content', []))
        if res.get('isError'):
            break
        seen |= shown(tool, res)
        first = first or (calls == 1 and truth <= seen)
        if truth <= seen:
            break
    return first, calls, size, truth <= seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--connector', required=True)
    ap.add_argument('--baseline')
    ap.add_argument('--zoekt', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--modules', required=True)
    a = ap.parse_args()
    modules = [m for m in open(a.modules).read().split() if m]
    truths = {t[0]: truth_of(t[4], a.src, modules) for t in TASKS}
    results, catalogue = {}, {}
    for label, binary in [('after', a.connector), ('before', a.baseline)]:
        if not binary:
            continue
        conn = Connector(binary, a.zoekt)
        catalogue[label], offered = conn.catalogue()
        # A task for a tool the connector does not offer (an older one) is not done: no call, no bytes.
        results[label] = {t[0]: run(conn, t[2], t[3], truths[t[0]]) if t[2] in offered else None for t in TASKS}
        conn.close()
    labels = [lb for lb in ('before', 'after') if lb in results]
    cell = lambda r: 'no such tool' if r is None else f'{"yes" if r[0] else "no"}, {r[1]}, {r[2]:,} B' + ('' if r[3] else ' (not all found)')
    for t in TASKS:
        print(f'| {t[0]} | {t[1]} | `{t[2]}` | {len(truths[t[0]])} | ' + ' | '.join(cell(results[lb][t[0]]) for lb in labels) + ' |')
    for lb in labels:
        r = [x or (False, 0, 0, False) for x in results[lb].values()]
        print(f'| all ({lb}) | | | | {sum(x[0] for x in r)} of {len(TASKS)} right first time, {sum(x[1] for x in r)} calls, '
              f'{sum(x[2] for x in r):,} B; {sum(x[3] for x in r)} finished |')
    missed = [f'{lb}:{name}' for lb in labels for name, r in results[lb].items() if r and not r[3]]
    if missed:
        print('tasks.py: not finished within the calls allowed: ' + ' '.join(missed), file=sys.stderr)
    print('CATALOGUE ' + ' '.join(str(catalogue[lb]) for lb in ('after', 'before') if lb in catalogue))
    right = [sum(bool(x and x[0]) for x in results[lb].values()) for lb in ('after', 'before') if lb in results]
    print('TASKS ' + ' '.join([str(right[0]), str(len(TASKS))] + [str(x) for x in right[1:]]))


if __name__ == '__main__':
    main()
