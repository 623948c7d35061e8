#!/usr/bin/env python3
"""find_symbol against universal-ctags' own tags, on the benchmark corpus indexed with ctags.

    symbols.py --connector BIN --zoekt-bin DIR --corpus DIR

The corpus is tests/bench/corpus.sh DIR ctags's: DIR/index-ctags holds the Go modules of DIR/modules
(repositories DIR/src/usr/share/gocode/src/<module>) and the non-Go sources of DIR/extra-modules
(DIR/extra-src/<package>, served as mirrors/debian/<package>), indexed by zoekt-git-index with
universal-ctags. This script serves that index with zoekt-webserver, runs `ctags --output-format=json`
over each repository's indexed files (git ls-files of main), and picks 20 names of functions, types and
methods (at least 6 characters, defined in at most 4 places; 14 from Go, 3 each from Python and C, spread
over the sorted list). Each is asked of find_symbol through the connector over stdio ({"name": N,
"max_files": 200}); a hit is a (repository, path, line). Prints Markdown table rows, then a line
"SYMBOLS <names with every ctags definition found> <names> <hits> <of them ctags definitions> <ctags
definitions> <most unrelated hits in one answer>"; then the index figures from DIR/index-ctags.stats.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

import mcp_stdio

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# How many names to take from each language, and the kinds that are functions, types and methods there
# (Go methods are funcs with a type for scope, Python's are members; C's members are struct fields).
PICK = {'Go': 14, 'Python': 3, 'C': 3}
WANTED_KINDS = {'Go': {'func', 'type', 'struct', 'interface'}, 'Python': {'function', 'class', 'member'},
                'C': {'function', 'struct', 'typedef'}}


def ctags_tags(repo):
    """universal-ctags' tags for the files of repo's main, as dicts (name, path, line, kind, language)."""
    files = subprocess.run(['git', '-C', repo, 'ls-files', '-z'], capture_output=True, check=True).stdout
    out = subprocess.run(['ctags', '--output-format=json', '--fields=+nKl', '-f', '-', '-L', '-'], cwd=repo,
                         input=files.replace(b'\0', b'\n'), capture_output=True).stdout
    tags = []
    for line in out.splitlines():
        t = json.loads(line)
        if t.get('_type') == 'tag':
            tags.append(t)
    return tags


def pick_names(defs):
    """20 names (name -> language), spread over each language's sorted candidates."""
    by_lang = {}
    for name, (lang, kinds, places) in sorted(defs.items()):
        if len(name) >= 6 and name.isidentifier() and len(places) <= 4 and kinds & WANTED_KINDS.get(lang, set()):
            by_lang.setdefault(lang, []).append(name)
    chosen = {}
    for lang, n in PICK.items():
        names = by_lang.get(lang, [])
        for i in range(n):
            if names:
                chosen[names[(2 * i + 1) * len(names) // (2 * n)]] = lang
    return chosen


def serve(zoekt_bin, index, want):
    port = subprocess.run([os.path.join(ROOT, 'scripts/free-port.sh')], capture_output=True, text=True,
                          check=True).stdout.strip()
    proc = subprocess.Popen([os.path.join(zoekt_bin, 'zoekt-webserver'), '-index', index, '-listen',
                             f'127.0.0.1:{port}', '-rpc'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f'http://127.0.0.1:{port}'
    for _ in range(600):
        try:
            req = urllib.request.Request(url + '/api/list', data=b'{"Q":""}')
            with urllib.request.urlopen(req, timeout=5) as r:
                if len(json.load(r)['List']['Repos'] or []) >= want:
                    return proc, url
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit('symbols.py: zoekt-webserver did not serve the corpus')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--connector', required=True)
    ap.add_argument('--zoekt-bin', required=True)
    ap.add_argument('--corpus', required=True)
    a = ap.parse_args()
    go_src = os.path.join(a.corpus, 'src/usr/share/gocode/src')
    repos = {m: os.path.join(go_src, m) for m in open(os.path.join(a.corpus, 'modules')).read().split()}
    for pkg in open(os.path.join(a.corpus, 'extra-modules')).read().split():
        repos[f'debian/{pkg}'] = os.path.join(a.corpus, 'extra-src', pkg)

    defs = {}  # name -> (language of its first tag, kinds, {(repository, path, line)})
    for name, path in repos.items():
        for t in ctags_tags(path):
            lang, kinds, places = defs.setdefault(t['name'], (t.get('language'), set(), set()))
            kinds.add(t.get('kind'))
            places.add((name, t['path'], t['line']))
    chosen = pick_names(defs)

    zoekt, url = serve(a.zoekt_bin, os.path.join(a.corpus, 'index-ctags'), len(repos))
    try:
        conn = mcp_stdio.Connector(a.connector, url, 'symbols')
        full = hits_all = right_all = want_all = worst = 0
        for name, lang in sorted(chosen.items(), key=lambda x: (list(PICK).index(x[1]), x[0].lower())):
            want = defs[name][2]
            t0 = time.monotonic()
            res = conn.call('tools/call', {'name': 'find_symbol', 'arguments': {'name': name, 'max_files': 200}})
            ms = (time.monotonic() - t0) * 1000
            got = {(f['repository'], f['path'], d['line']) for f in res['structuredContent']['files']
                   for d in f['definitions']}
            right = got & want
            unrelated = len(got - want)
            full += right == want
            hits_all += len(got)
            right_all += len(right)
            want_all += len(want)
            worst = max(worst, unrelated)
            for miss in sorted(want - got):
                large = os.path.getsize(os.path.join(repos[miss[0]], miss[1])) > 2 << 20
                print(f'{name}: ctags defines it at {miss[0]}/{miss[1]}:{miss[2]}, find_symbol does not show it'
                      f'{" (the file is larger than 2 MiB, so Zoekt does not index its text or symbols)" if large else ""}',
                      file=sys.stderr)
            for extra in sorted(got - want):
                print(f'{name}: find_symbol shows {extra[0]}/{extra[1]}:{extra[2]}, which ctags does not tag {name}',
                      file=sys.stderr)
            kinds = ', '.join(sorted(k for k in defs[name][1] if k))
            print(f'| `{name}` | {lang} | {kinds} | {len(want)} | {len(got)} | {len(right)} | {unrelated} '
                  f'| {len(res["content"][0]["text"])} | {ms:.1f} |')
        conn.close()
    finally:
        zoekt.terminate()
        zoekt.wait()
    print(f'SYMBOLS {full} {len(chosen)} {hits_all} {right_all} {want_all} {worst}')


if __name__ == '__main__':
    main()
