#!/usr/bin/env python3
"""promtext.py FILE: a strict parser of Prometheus' text exposition format
(0.0.4), as node_exporter's textfile collector reads it, for metrics.bats
(Debian's promtool is in the prometheus package, too big to pull in for
this).

It checks: UTF-8 throughout and a final newline; '# HELP NAME TEXT' and
'# TYPE NAME TYPE' lines; metric and label names by the format's rules;
label values quoted, with no escapes but \\\\, \\" and \\n; values and
timestamps as the format writes numbers; at most one TYPE and one HELP per
family, before its samples; the samples of a family together; no series
twice; counters not negative.

It prints each sample on a line of its own, tab-separated: the metric
name, its labels as JSON (values unescaped), the value as a float's repr.
On the first error: 'FILE:LINE: what' on stderr, exit 1.
"""
import json
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    r"|[+-]?Inf|NaN")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
SUFFIXES = ("_bucket", "_sum", "_count")


class Bad(Exception):
    pass


def family_of(name, types):
    """The family a sample belongs to: histograms and summaries own their
    _bucket, _sum and _count series."""
    for s in SUFFIXES:
        base = name[: -len(s)]
        if name.endswith(s) and types.get(base) in ("histogram", "summary"):
            return base
    return name


def labels(text, i):
    """Parse '{a="b",...}' at text[i]: (dict, index after '}')."""
    out = {}
    i += 1
    while True:
        if text[i] == "}":
            return out, i + 1
        m = LABEL.match(text, i)
        if not m:
            raise Bad("bad label name at column %d" % (i + 1))
        key = m.group(0)
        i = m.end()
        if text[i : i + 2] != '="':
            raise Bad("label %s: expected =\" at column %d" % (key, i + 1))
        i += 2
        val = []
        while True:
            if i >= len(text):
                raise Bad("label %s: unterminated value" % key)
            c = text[i]
            if c == "\\":
                e = text[i + 1 : i + 2]
                if e not in ("\\", '"', "n"):
                    raise Bad("label %s: bad escape \\%s" % (key, e))
                val.append("\n" if e == "n" else e)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise Bad("label %s: raw newline in value" % key)
            else:
                val.append(c)
                i += 1
        if key in out:
            raise Bad("label %s twice" % key)
        out[key] = "".join(val)
        if text[i] == ",":
            i += 1
        elif text[i] != "}":
            raise Bad("expected , or } at column %d" % (i + 1))


def parse(data):
    if not data.endswith(b"\n"):
        raise Bad("no newline at the end of the file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Bad("not UTF-8 (byte %d)" % e.start)
    types, helps, seen, done, out = {}, {}, set(), set(), []
    current = None
    for n, line in enumerate(text.split("\n")[:-1], 1):
        try:
            if line.startswith("#"):
                words = line.split(" ", 3)
                if len(words) >= 2 and words[1] in ("HELP", "TYPE"):
                    if len(words) < 3 or not NAME.fullmatch(words[2]):
                        raise Bad("%s without a valid metric name" % words[1])
                    fam = words[2]
                    if fam in done or (fam in seen and fam != current):
                        raise Bad("%s of %s after its samples" % (words[1], fam))
                    if words[1] == "TYPE":
                        if fam in types:
                            raise Bad("second TYPE of %s" % fam)
                        if len(words) != 4 or words[3] not in TYPES:
                            raise Bad("bad TYPE line")
                        types[fam] = words[3]
                    else:
                        if fam in helps:
                            raise Bad("second HELP of %s" % fam)
                        helps[fam] = words[3] if len(words) == 4 else ""
                continue
            if line.strip() == "":
                continue
            m = NAME.match(line)
            if not m:
                raise Bad("bad metric name")
            name, i = m.group(0), m.end()
            lab = {}
            if i < len(line) and line[i] == "{":
                lab, i = labels(line, i)
            rest = line[i:]
            if not rest.startswith(" "):
                raise Bad("expected a blank before the value")
            parts = rest.split()
            if len(parts) not in (1, 2) or not NUMBER.fullmatch(parts[0]):
                raise Bad("bad value %r" % rest)
            if len(parts) == 2 and not re.fullmatch(r"-?[0-9]+", parts[1]):
                raise Bad("bad timestamp %r" % parts[1])
            value = float(parts[0])
            fam = family_of(name, types)
            if fam != current:
                if current is not None:
                    done.add(current)
                if fam in done:
                    raise Bad("samples of %s apart from the others" % fam)
                current = fam
            seen.add(fam)
            key = (name, tuple(sorted(lab.items())))
            if key in seen:
                raise Bad("series %s%s twice" % (name, json.dumps(lab)))
            seen.add(key)
            if types.get(fam) == "counter" and not value >= 0:
                raise Bad("counter %s is %s" % (name, parts[0]))
            out.append("%s\t%s\t%r" % (name, json.dumps(lab, ensure_ascii=False), value))
        except (Bad, IndexError) as e:
            raise Bad("%d: %s" % (n, e or "truncated line"))
    return out


def main():
    path = sys.argv[1]
    with open(path, "rb") as f:
        data = f.read()
    try:
        for line in parse(data):
            print(line)
    except Bad as e:
        print("%s:%s" % (path, e), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
