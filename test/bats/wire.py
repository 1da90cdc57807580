#!/usr/bin/env python3
"""wire.py: what redlock sent a server, from the output of redis-cli
MONITOR, with only what varies from run to run replaced, for wire.bats to
compare with its golden files (test/bats/wire/).

usage: wire.py [--per-connection] [--repeats] MONITOR_FILE >NORMALISED

Each command is a line "[DB CLIENT] NAME", then a line for each of its
arguments, its position and its text as MONITOR quotes it: a changed
argument is one line of a diff, an extra round trip a few more.

What is kept, byte for byte: every command that a client sent between the
lines of ECHO wire-begin and ECHO wire-end (the markers themselves are
left out), in the order the server ran them, each with its database and
every argument, but for the replacements below. What is left out: the
commands that scripts ran (MONITOR's "lua" lines), which follow from the
script's text and its arguments, both kept; and the timestamps.

What is replaced, and why (nothing else: any other difference fails):
- The client's address (IP:PORT, a port the kernel picked) by <c1>,
  <c2> ... in the order each client first sent a command: which
  connection sends what stays visible, and an extra connection shows.
- The text of a script sent whole (EVAL, SCRIPT LOAD) by <script SHA1>,
  the SHA-1 of its exact bytes: the golden stays readable, a change of a
  single byte still changes it, and it reads as the EVALSHA of the same
  script does.
- The boot id (/proc/sys/kernel/random/boot_id) by <boot> and the pid
  namespace (/proc/self/ns/pid) by <pidns>, in the holder records' JSON:
  the machine's, not redlock's.
- Every other UUID (the 128 random bits of an owner token, written as a
  UUID) by <uuid1>, <uuid2> ... in order of first appearance: each run
  draws new ones, and which token is sent where stays visible. A permit's
  key (--limit) is 39 digits: a token's UUID without its dashes, then
  its pid in 7 digits; it reads <uuidN as 32 hex digits><pidN as 7
  digits>, N as that token's.
- A pid, only where redlock writes one (after an owner token's UUID and
  its colon, in a permit's key, as the argument right after the host's,
  as "pid":N in JSON and as the value of the pid field of a history
  entry) by <pid1>, <pid2> ... in order of first appearance. A number
  elsewhere is never taken for a pid: with pid_max at 32768, a pid may
  equal a constant such as 5000 or 30000.
- The host name (gethostname) and the user name, only where redlock
  writes them (an argument that is the host's name followed by a pid,
  then the user's; "host":"...", "user":"..." in JSON; the host and user
  fields of a history entry), by <host> and <user>: the machine's.
- The value of a history entry's wait_ms field (how long the caller had
  waited when it sent the call, by its clock: a first attempt says 0, or
  1 when a millisecond ended between the start of the wait and the call)
  by <ms>.
- With --per-connection, the order between the commands of different
  connections, which run at once (a pool's connections, one per name:
  the first name's acquisition goes while the others' handshakes do):
  the commands are grouped by connection, each group in the order its
  connection sent them, the groups in the order the connections first
  sent a command.
- With --repeats, the number of times the same command was sent again
  in a row (the watchdog's renewals: as many as a hold's length allows):
  a run of two or more is the command once, then the line REPEATED; a
  command sent once stays as it is.
"""
import getpass
import hashlib
import os
import re
import socket
import sys

LINE = re.compile(r'^(\d+\.\d+) \[(\d+) ([^\]]+)\] (.*)$')
UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')
ESCAPES = {'n': '\n', 'r': '\r', 't': '\t', 'a': '\a', 'b': '\b',
           '"': '"', '\\': '\\'}
REPEATED = '      (sent again in a row: 2 or more times in all)'
REPR = {'\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t',
        '\a': '\\a', '\b': '\\b'}


def args_of(text):
    """The arguments of a MONITOR line (sdscatrepr's quoting undone), as
    str of code points 0-255, one per byte."""
    out, i = [], 0
    while i < len(text):
        if text[i] == ' ':
            i += 1
            continue
        if text[i] != '"':
            raise ValueError('unquoted argument at %d: %r' % (i, text))
        i += 1
        cur = []
        while text[i] != '"':
            c = text[i]
            if c == '\\':
                n = text[i + 1]
                if n == 'x':
                    cur.append(chr(int(text[i + 2:i + 4], 16)))
                    i += 4
                    continue
                cur.append(ESCAPES[n])
                i += 2
                continue
            cur.append(c)
            i += 1
        out.append(''.join(cur))
        i += 1
    return out


def repr_of(arg):
    """ARG quoted as MONITOR quotes it (sdscatrepr)."""
    out = []
    for c in arg:
        if c in REPR:
            out.append(REPR[c])
        elif 32 <= ord(c) < 127:
            out.append(c)
        else:
            out.append('\\x%02x' % ord(c))
    return '"' + ''.join(out) + '"'


def first_line(path):
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return None


class Names:
    """Each distinct value of one kind, named PREFIX1, PREFIX2 ... in the
    order first seen."""

    def __init__(self, prefix):
        self.prefix, self.seen = prefix, {}

    def __call__(self, value):
        if value not in self.seen:
            self.seen[value] = '<%s%d>' % (self.prefix, len(self.seen) + 1)
        return self.seen[value]


def options(argv):
    """The flags of the command line (--per-connection, --repeats) and
    the MONITOR file."""
    flags = {'--per-connection': False, '--repeats': False}
    files = []
    for a in argv:
        if a in flags:
            flags[a] = True
        else:
            files.append(a)
    if len(files) != 1:
        sys.exit('usage: wire.py [--per-connection] [--repeats] MONITOR_FILE')
    return flags, files[0]


def main():
    flags, path = options(sys.argv[1:])
    host = socket.gethostname()
    user = getpass.getuser()
    boot = first_line('/proc/sys/kernel/random/boot_id')
    try:
        pidns = os.readlink('/proc/self/ns/pid')
    except OSError:
        pidns = None
    clients, uuids, pids = Names('c'), Names('uuid'), Names('pid')

    def uuid(m):
        return uuids(m.group(0).replace('-', ''))

    def permit(m):
        return '<%s as 32 hex digits><%s as 7 digits>' % (
            uuids(m.group(1))[1:-1], pids(str(int(m.group(2))))[1:-1])

    def pid(m):
        return m.group(1) + pids(m.group(2))

    def fixed(s):
        # The machine's own values, then the tokens, then the pids
        # where redlock writes one.
        for value, name in ((boot, '<boot>'), (pidns, '<pidns>')):
            if value:
                s = s.replace('"%s"' % value, '"%s"' % name)
        s = UUID.sub(uuid, s)
        s = re.sub(r'(?<![0-9a-f])([0-9a-f]{32})([0-9]{7})(?![0-9a-f])',
                   permit, s)
        s = re.sub(r'(<uuid\d+>:)(\d+)', pid, s)
        s = re.sub(r'("pid":)(\d+)', pid, s)
        s = re.sub(r'(\x1fpid\x1f)(\d+)(?=\x1f|$)', pid, s)
        for field, value in (('host', host), ('user', user)):
            s = s.replace('"%s":"%s"' % (field, value),
                          '"%s":"<%s>"' % (field, field))
            s = re.sub('(^|\x1f)%s\x1f%s(?=\x1f|$)' %
                       (field, re.escape(value)),
                       '\\1%s\x1f<%s>' % (field, field), s)
        s = re.sub(r'(\x1fwait_ms\x1f)(\d+)(?=\x1f|$)', r'\1<ms>', s)
        return s

    commands = []           # (client, lines of the command)
    inside = False
    with open(path, encoding='latin-1') as f:
        for raw in f:
            m = LINE.match(raw.rstrip('\n'))
            if not m:
                continue
            _, db, client, rest = m.groups()
            args = args_of(rest)
            if [a.lower() for a in args] == ['echo', 'wire-begin']:
                inside = True
                continue
            if [a.lower() for a in args] == ['echo', 'wire-end']:
                break
            if not inside or client == 'lua':
                continue
            cmd = args[0].upper()
            if cmd == 'EVAL' and len(args) > 1:
                args[1] = '<script %s>' % hashlib.sha1(
                    args[1].encode('latin-1')).hexdigest()
            if (cmd == 'SCRIPT' and len(args) > 2 and
                    args[1].upper() == 'LOAD'):
                args[2] = '<script %s>' % hashlib.sha1(
                    args[2].encode('latin-1')).hexdigest()
            args = [a if a.startswith('<script ') else fixed(a)
                    for a in args]
            # The pid and the user as arguments: right after the host's.
            for i in range(len(args) - 1):
                if args[i] == host and re.fullmatch(r'\d+', args[i + 1]):
                    args[i] = '<host>'
                    args[i + 1] = pids(args[i + 1])
                    if i + 2 < len(args) and args[i + 2] == user:
                        args[i + 2] = '<user>'
            name = clients(client)
            lines = ['[%s %s] %s' % (db, name, repr_of(args[0]))]
            lines += ['%5d %s' % (i, repr_of(a))
                      for i, a in enumerate(args) if i > 0]
            commands.append((name, lines))
    if not inside:
        sys.exit('wire.py: no ECHO wire-begin in %s' % path)
    if flags['--per-connection']:
        order = list(dict.fromkeys(c for c, _ in commands))
        commands.sort(key=lambda c: order.index(c[0]))
    out, last, again = [], None, False
    for _, lines in commands:
        if flags['--repeats'] and lines == last:
            again = True
            continue
        if again:
            out.append(REPEATED)
            again = False
        out += lines
        last = lines
    if again:
        out.append(REPEATED)
    for line in out:
        print(line)


if __name__ == '__main__':
    main()
