#!/usr/bin/env python3
"""Agent-written patterns through search_code, checked against git grep over the same mirrors.

    patterns.py --connector BIN --zoekt URL --src DIR --modules FILE

The corpus is tests/bench/corpus.sh's: each line of FILE is a module path, DIR/<path> its git repository
(branch main, the branch zoekt-git-index indexed), served by Zoekt as mirrors/<path>. Each pattern below is
sent to search_code as an agent sends it (the default syntax: one pattern as ripgrep reads it), through the
connector over stdio, with max_files 200; the same pattern goes to `git grep` over every repository's main
(-E, -F or -P as noted, -i when the pattern has no upper-case letter: ripgrep's smart case; -I, since
Zoekt does not index binary files either). Compared:
the files, each file's matching lines (search_code's matchingLines, git grep -c) and the matches
(search_code's totalMatches, Zoekt's count, against the lines git grep -o prints). Where more than 200
files match, only the totals are compared. Files that git grep finds and Zoekt did not index are put down
to Zoekt's skipping (larger than 2 MiB, or more than 20,000 distinct trigrams), by reading them.

Prints Markdown table rows (tests/bench/run.sh puts them into docs/benchmarks.md), then a line
"PATTERNS <same> <total>"; every difference on stderr, one line per file.
"""
import argparse
import json
import os
import subprocess
import sys
import urllib.request

import mcp_stdio

# (what an agent types, search_code's extra arguments, git grep's reading of it). The examples
# first, then what an agent working on Go services writes: phrases, calls with unbalanced parentheses,
# escapes, classes, anchors, alternations, word boundaries, quotes and backslashes.
PATTERNS = [
    ('func NewSharedInformerFactory(', {}, '-F'),
    (r'time\.Sleep\([0-9]+ \* time\.Second\)', {}, '-E'),
    ('type SharedInformer interface', {}, '-E'),
    ('type Handler interface', {}, '-E'),
    ('func NewServer(', {}, '-F'),
    ('context.WithTimeout(ctx, ', {}, '-F'),
    ('[]byte(', {}, '-F'),
    ('if err != nil {', {}, '-F'),
    ('interface{}', {}, '-F'),
    ('errors.New("', {}, '-F'),
    (r'func \(s \*Server\) ', {}, '-E'),
    (r'^func main\(\) \{$', {}, '-E'),
    (r'^\s+return nil, err$', {}, '-E'),
    (r'(Marshal|Unmarshal)JSON\(', {}, '-E'),
    (r'json:"[a-z_]+,omitempty"', {}, '-E'),
    (r'\bctx\b', {}, '-E'),
    (r'\w+error\(', {}, '-P'),
    (r'time\.Duration\(\d+\)', {}, '-P'),
    (r'fmt\.Errorf\("[^"]*%w"', {}, '-E'),
    ('not implemented', {}, '-E'),
    (r'"\n"', {'literal': True}, '-F'),
    (r'strings\.Split\([a-z]+, "\\n"\)', {}, '-E'),
    (r'// TODO\([a-z]+\):', {}, '-E'),
    ('sync.Mutex', {}, '-E'),
    (' nil)', {}, '-F'),
    (r'defer .*\.Close\(\)', {}, '-E'),
    (r'^\tdefer ', {}, '-P'),
    (r'(?i)fixme', {}, '-P'),
]

MAX_FILES = 200


def smart_case(pattern, mode):
    """ripgrep's smart case: case-insensitive unless the pattern has an upper-case letter of its own
    (an escape such as \\S or \\W names a class, not a letter)."""
    text = pattern
    if mode != '-F':
        out, i = [], 0
        while i < len(pattern):
            if pattern[i] == '\\' and i + 1 < len(pattern):
                i += 2
                continue
            out.append(pattern[i])
            i += 1
        text = ''.join(out)
    return not any(c.isupper() for c in text)


def git_grep(repo, pattern, mode):
    """{path: (matching lines, matches)} of git grep over repo's main."""
    args = ['git', '-C', repo, 'grep', '-I', '-z', '-o', '-n', mode]
    if smart_case(pattern, mode):
        args.append('-i')
    args += ['-e', pattern, 'main', '--']
    out = subprocess.run(args, capture_output=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f'patterns.py: {" ".join(args)}: {out.stderr.decode(errors="replace")}')
    found = {}
    for rec in out.stdout.split(b'\n'):
        parts = rec.split(b'\0')
        if len(parts) < 3:
            continue
        path = parts[0].split(b':', 1)[1].decode(errors='replace')
        lines, matches, ascii_only = found.get(path, (set(), 0, True))
        lines.add(parts[1])
        found[path] = (lines, matches + 1, ascii_only and parts[2].isascii())
    return {p: (len(v[0]), v[1], v[2]) for p, v in found.items()}


def zoekt_skips(repo, path):
    """Why Zoekt 51a31b62's indexer keeps a file's name but not its content, or None."""
    blob = subprocess.run(['git', '-C', repo, 'show', f'main:{path}'], capture_output=True).stdout
    if len(blob) > 2 << 20:
        return 'larger than 2 MiB'
    if b'\0' in blob:
        return 'binary (a NUL byte)'
    text = blob.decode('utf-8', errors='replace')
    if len(text) > 20000 and len({text[i:i + 3] for i in range(len(text) - 2)}) > 20000:
        return 'more than 20,000 distinct trigrams'
    return None


class Connector(mcp_stdio.Connector):
    def __init__(self, binary, zoekt):
        super().__init__(binary, zoekt, 'patterns')

    def search(self, pattern, extra):
        args = {'query': pattern, 'max_files': MAX_FILES, 'context_lines': 0, 'max_bytes': 65536, **extra}
        res = self.call('tools/call', {'name': 'search_code', 'arguments': args})
        if res.get('isError'):
            raise SystemExit(f'patterns.py: search_code {args}: {res["content"][0]["text"]}')
        return res['structuredContent']


def zoekt_files(url, query):
    """{(repository, path): matching lines} of every file Zoekt matches for query (the one search_code
    sent), asked for directly, since search_code shows at most 200."""
    body = json.dumps({'Q': query, 'Opts': {'MaxDocDisplayCount': 100000, 'ShardMaxMatchCount': 10000,
                                            'TotalMaxMatchCount': 100000, 'ChunkMatches': True,
                                            'NumContextLines': 0, 'MaxWallTime': 120 * 10**9}}).encode()
    # On a busy machine Zoekt has been seen to send fewer files than it counted: asked again then.
    for _ in range(3):
        req = urllib.request.Request(url + '/api/search', data=body, headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=150) as r:
            res = json.load(r)['Result']
        if len(res.get('Files') or []) == res['FileCount']:
            break
    files = {}
    for f in res.get('Files') or []:
        lines = set()
        for c in f.get('ChunkMatches') or []:
            for rg in c['Ranges']:
                lines.update(range(rg['Start']['LineNumber'], rg['End']['LineNumber'] + 1))
        files[(f['Repository'].removeprefix('mirrors/'), f['FileName'])] = len(lines)
    return files


def md(s):
    return '`' + s.replace('|', '\\|') + '`'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--connector', required=True)
    ap.add_argument('--zoekt', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--modules', required=True)
    ap.add_argument('--only', help='run only the patterns containing this text')
    a = ap.parse_args()
    modules = [m for m in open(a.modules).read().split('\n') if m]
    conn = Connector(a.connector, a.zoekt)
    same_all = 0
    chosen = [p for p in PATTERNS if not a.only or a.only in p[0]]
    for pattern, extra, mode in chosen:
        want = {}
        for m in modules:
            for path, counts in git_grep(os.path.join(a.src, m), pattern, mode).items():
                want[(m, path)] = counts
        sc = conn.search(pattern, extra)
        # The files: those search_code shows when it can show them all, else all Zoekt matches for the query
        # search_code sent (the same search, asked for directly). The totals are search_code's.
        shown = sc['totalFiles'] <= MAX_FILES and not set(sc['truncation']) & {'max_files', 'zoekt_limit'}
        got = {(f['repository'], f['path']): f['matchingLines'] for f in sc['files']} if shown else \
            zoekt_files(a.zoekt, sc['query'])
        skipped, notes = {}, []
        limited = 'zoekt_limit' in sc['truncation']
        for key in want:
            if key not in got and not limited:
                why = zoekt_skips(os.path.join(a.src, key[0]), key[1])
                if why:
                    skipped[key] = why
        kept = {k: v for k, v in want.items() if k not in skipped}
        want_lines = sum(v[0] for v in kept.values())
        want_matches = sum(v[1] for v in kept.values())
        same_files = set(got) == set(kept) and sc['totalFiles'] == len(kept)
        same_counts = same_files and all(got[k] == kept[k][0] for k in got) and sc['totalMatches'] == want_matches
        for k in sorted(set(got) | set(want)):
            if got.get(k) != (want[k][0] if k in want else None) or k in skipped:
                print(f'{pattern}: {k[0]}/{k[1]}: Zoekt {got.get(k)} lines, git grep '
                      f'{want.get(k, (None,))[0]} lines{"; " + skipped[k] if k in skipped else ""}',
                      file=sys.stderr)
        if skipped:
            reasons = sorted(set(skipped.values()))
            notes.append(f'git grep also finds {len(skipped)} file(s) that Zoekt does not index '
                         f'({", ".join(reasons)}), left out of its figures')
        non_ascii = [k for k in kept if got.get(k) != kept[k][0] and not kept[k][2]]
        if non_ascii:
            notes.append(f'{len(non_ascii)} file(s) differ where git grep matched non-ASCII text: RE2\'s \\w, \\b and '
                         f'\\s are ASCII-only, glibc\'s (and ripgrep\'s) Unicode-aware')
        if sc.get('note', '').startswith('The pattern is not a valid regular expression'):
            notes.append('searched as a literal, with the note')
        if same_files and not same_counts and sc['totalMatches'] == want_matches:
            notes.append('as many matches, on more lines: a match that takes a line break (RE2\'s \\s and negated '
                         'classes include it, and Zoekt matches a whole file, not line by line) starts on the line '
                         'above')
        if limited:
            notes.append('Zoekt stopped at its match limit (ShardMaxMatchCount 10000 in a shard): its counts are '
                         'lower bounds, shown as N+')
        same = same_files and same_counts
        same_all += same
        flags = ' '.join([mode] + (['-i'] if smart_case(pattern, mode) else []))
        print(f'| {md(pattern)}{" (literal)" if extra.get("literal") else ""} | {flags} '
              f'| {len(kept)} / {want_lines} / {want_matches} | {sc["totalFiles"]} / {sum(got.values())} / {sc["totalMatches"]} '
              f'| {"yes" if same_files else "no"} | {"yes" if same_counts else "no"} | {"; ".join(notes)} |')
        sys.stdout.flush()
    conn.close()
    print(f'PATTERNS {same_all} {len(chosen)}')


if __name__ == '__main__':
    main()
