#!/usr/bin/env python3
# go-text-tree.py DIR: about 18 MB of Go-like text in 1,500 files under DIR, the same bytes every run
# (a fixed seed): enough for zoekt-git-index to take seconds, and for its shards to outgrow a small
# volume (tests/integration/test_faults.sh, test_faults_node.sh).
import os, random, sys
random.seed(7)
words = [''.join(random.choice('abcdefghijklmnopqrstuvwxyz_') for _ in range(random.randint(3, 12)))
         for _ in range(20000)]
for d in range(30):
    os.makedirs(f"{sys.argv[1]}/pkg{d}", exist_ok=True)
    for f in range(50):
        with open(f"{sys.argv[1]}/pkg{d}/file{f}.go", "w") as out:
            for _ in range(200):
                out.write("func %s(%s int) %s { return %s }\n" % tuple(random.choice(words) for _ in range(4)))
