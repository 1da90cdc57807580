#!/usr/bin/env python3
"""strict.py json|lines|text: check standard input strictly, for output
made of bytes that anyone who can write the database can store.

json: one JSON document; lines: one JSON document a line. Both: UTF-8
throughout, no key twice in an object (a forged field would be one), no
NaN or Infinity, nothing after the document.
text: UTF-8 throughout, no control character (C0 but newline, DEL, C1).
Exits 1 naming what is wrong."""
import json
import sys


def pairs(items):
    keys = [k for k, _ in items]
    if len(keys) != len(set(keys)):
        sys.exit("a key twice in one object: %r" % keys)
    return dict(items)


def constant(name):
    sys.exit("not JSON: %s" % name)


def main():
    what = sys.argv[1]
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.exit("not UTF-8: %s in %r" % (e, data))
    if what == "text":
        bad = [c for c in text if c != "\n" and
               (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0)]
        if bad:
            sys.exit("control characters %r in %r" % (bad, text))
        return
    docs = text.splitlines() if what == "lines" else [text]
    if not docs:
        sys.exit("no JSON at all")
    for d in docs:
        try:
            json.loads(d, object_pairs_hook=pairs, parse_constant=constant)
        except ValueError as e:
            sys.exit("not JSON: %s in %r" % (e, d))


main()
