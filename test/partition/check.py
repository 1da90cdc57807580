#!/usr/bin/env python3
"""check.py: the checker of the partition harness's histories.

usage: check.py [--table] HISTDIR [HISTDIR...]

Reads each HISTDIR's sections.log, store.log, faults.log, waits.log and
meta (formats in test/partition/run.sh) and reports, per HISTDIR:
sections, faults by kind, overlaps in real time (exclusive kinds: plain,
fair, write; readers beside readers only), accepted writes whose token is
below one accepted before (exclusive kinds), a fence held by two pids
(exclusive kinds), more than N sections of limitN at once, and stalls
after each heal. A section without its exit (its holder killed) lasts
until the end of the history. Times are printed in ms from the history's
first record. The last line sums them over all HISTDIRs.

Exit 0 when no HISTDIR has a stale write accepted, a duplicate token
(unless its meta says dup_ok=1), a limit exceeded, a stall, or an overlap
(unless its meta says inherent=1); 1 otherwise; 2 on a malformed file.
"""
import argparse
import os
import re
import sys
from collections import defaultdict

EXCLUSIVE = ('plain', 'fair', 'write')
KIND = re.compile(r'^(plain|fair|read|write|limit[1-9][0-9]*)$')


class Malformed(Exception):
    pass


def lines(path, need=True):
    """Yields (where, fields) of each non-blank line of PATH."""
    if not os.path.exists(path):
        if need:
            raise Malformed(path + ': missing')
        return
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if text.strip():
                yield '%s:%d' % (path, n), text.split()


def num(where, s, what):
    if not re.fullmatch(r'[0-9]+', s):
        raise Malformed('%s: %s %r is not a non-negative integer'
                        % (where, what, s))
    return int(s)


def read_meta(d):
    meta = {'topology': '?', 'kind': '?', 'fault': '?', 'inherent': '0',
            'dup_ok': '0', 'stall_bound_ms': '10000'}
    for where, f in lines(os.path.join(d, 'meta')):
        key, eq, value = ' '.join(f).partition('=')
        if not eq or not key:
            raise Malformed(where + ': not key=value')
        meta[key] = value
    for key in ('ttl_ms', 'stall_bound_ms'):
        if key not in meta:
            raise Malformed(os.path.join(d, 'meta') + ': no ' + key)
        meta[key] = num(os.path.join(d, 'meta'), meta[key], key)
    for key in ('inherent', 'dup_ok'):
        if meta[key] not in ('0', '1'):
            raise Malformed('%s: %s must be 0 or 1'
                            % (os.path.join(d, 'meta'), key))
    return meta


def read_sections(d, times):
    """Sections as dicts: pid, name, kind, client, fence, t0, t1 (None: open)."""
    done, open_ = [], {}
    for where, f in lines(os.path.join(d, 'sections.log')):
        if f[0] not in ('enter', 'exit') or len(f) not in (7, 8) or \
                (f[0] == 'enter' and len(f) != 7):
            raise Malformed(where + ': not enter|exit MONO_NS CLIENT PID '
                            'NAME KIND FENCE [STATUS]')
        t, pid = num(where, f[1], 'MONO_NS'), num(where, f[3], 'PID')
        if f[2] not in ('redlock', 'redisson'):
            raise Malformed('%s: unknown client %r' % (where, f[2]))
        if not KIND.match(f[5]):
            raise Malformed('%s: unknown kind %r' % (where, f[5]))
        if f[6] != '-':
            num(where, f[6], 'FENCE')
        if len(f) == 8:
            num(where, f[7], 'STATUS')
        times.append(t)
        key = (pid, f[4])
        if f[0] == 'enter':
            if key in open_:
                raise Malformed('%s: pid %d entered %s twice' % (where, pid, f[4]))
            open_[key] = dict(pid=pid, name=f[4], client=f[2], kind=f[5],
                              fence=f[6], t0=t, t1=None)
            continue
        s = open_.pop(key, None)
        if s is None:
            raise Malformed('%s: exit of pid %d from %s without its enter'
                            % (where, pid, f[4]))
        if t < s['t0']:
            raise Malformed(where + ': exit before its enter')
        s['t1'] = t
        if s['fence'] == '-':
            s['fence'] = f[6]
        done.append(s)
    return done + list(open_.values())


def read_store(d, times):
    store = []
    for where, f in lines(os.path.join(d, 'store.log'), need=False):
        if len(f) != 5 or f[3] not in ('accepted', 'refused'):
            raise Malformed(where + ': not MONO_NS NAME TOKEN accepted|refused PID')
        t = num(where, f[0], 'MONO_NS')
        times.append(t)
        store.append((t, f[1], num(where, f[2], 'TOKEN'), f[3],
                      num(where, f[4], 'PID')))
    return sorted(store, key=lambda r: r[0])


def read_faults(d, times):
    """Faults as (kind, start, end or None), and the heals' times."""
    faults, heals, active = [], [], []
    for where, f in lines(os.path.join(d, 'faults.log'), need=False):
        ok = (f[0] in ('start', 'end') and len(f) >= 3) or \
            (f[0] == 'heal' and len(f) == 2)
        if not ok:
            raise Malformed(where + ': not start|end MONO_NS KIND DETAIL... '
                            'or heal MONO_NS')
        t = num(where, f[1], 'MONO_NS')
        times.append(t)
        if f[0] == 'start':
            active.append([f[2], t, None])
            faults.append(active[-1])
        elif f[0] == 'end':      # ends the oldest open fault of its kind
            for a in active:
                if a[0] == f[2]:
                    a[2] = t
                    active.remove(a)
                    break
        else:
            heals.append(t)
            for a in active:
                a[2] = t
            active = []
    return faults, heals


def read_waits(d, times):
    """Waits as dicts: pid, name, t0, limit (ns or None), t1, how, status."""
    waits, open_ = [], {}
    for where, f in lines(os.path.join(d, 'waits.log'), need=False):
        if f[0] not in ('start', 'got', 'gaveup') or len(f) not in (6, 7):
            raise Malformed(where + ': not start|got|gaveup MONO_NS CLIENT '
                            'PID NAME WAIT_MS [EXIT_STATUS]')
        t, pid = num(where, f[1], 'MONO_NS'), num(where, f[3], 'PID')
        limit = None if f[5] == '-' else num(where, f[5], 'WAIT_MS') * 10**6
        times.append(t)
        key = (pid, f[4])
        if f[0] == 'start':
            if key in open_:
                raise Malformed('%s: pid %d waits for %s twice' % (where, pid, f[4]))
            open_[key] = dict(pid=pid, name=f[4], t0=t, limit=limit,
                              t1=None, how=None, status=None)
            waits.append(open_[key])
            continue
        w = open_.pop(key, None)
        if w is None:
            raise Malformed('%s: %s of pid %d without its start'
                            % (where, f[0], pid))
        w['t1'], w['how'] = t, f[0]
        w['status'] = num(where, f[6], 'EXIT_STATUS') if len(f) == 7 else None
    return waits


def pairs_at_once(sections, end):
    """Yields, per name, each pair of sections of different pids that ran at
    once, and the sections running (with it) when each one began."""
    by_name = defaultdict(list)
    for s in sections:
        by_name[s['name']].append(s)
    for ss in by_name.values():
        ss.sort(key=lambda s: s['t0'])
        running = []
        for s in ss:
            running = [r for r in running if (end if r['t1'] is None else r['t1']) > s['t0']]
            yield s, running
            running.append(s)


def check(d, out):
    times = []
    meta = read_meta(d)
    sections = read_sections(d, times)
    store = read_store(d, times)
    faults, heals = read_faults(d, times)
    waits = read_waits(d, times)
    t_start, end = (min(times), max(times)) if times else (0, 0)

    def ms(t):
        return '%.3f' % ((t - t_start) / 1e6)

    def span(s):
        return '%s..%s' % (ms(s['t0']), ms(s['t1']) if s['t1'] is not None else 'end (open)')

    def verdicts(s):
        got = [r[3] for r in store if r[4] == s['pid'] and r[1] == s['name']
               and s['t0'] <= r[0] <= (end if s['t1'] is None else s['t1'])]
        return '%d accepted, %d refused' % (got.count('accepted'),
                                            got.count('refused'))

    r = dict(sections=len(sections), faults=len(faults), overlaps=0,
             stale=0, dups=0, limit=0, stalls=0)
    out.append('%s: topology=%s kind=%s fault=%s seed=%s ttl_ms=%d' % (
        d, meta['topology'], meta['kind'], meta['fault'],
        meta.get('seed', '?'), meta['ttl_ms']))
    n_open = sum(1 for s in sections if s['t1'] is None)
    out.append('  sections: %d (%d open at the end)' % (len(sections), n_open))
    by_kind = defaultdict(int)
    for k, _, _ in faults:
        by_kind[k] += 1
    out.append('  faults: %d%s' % (len(faults), ''.join(
        ', %s %d' % kv for kv in sorted(by_kind.items()))))

    peak = {}
    for s, running in pairs_at_once(sections, end):
        for o in running:
            if o['pid'] != s['pid'] and (s['kind'] in EXCLUSIVE or
                                         o['kind'] in EXCLUSIVE):
                r['overlaps'] += 1
                out.append('  overlap: %s: pid %d (%s %s, %s; store %s) and '
                           'pid %d (%s %s, %s; store %s)' % (
                               s['name'], o['pid'], o['client'], o['kind'],
                               span(o), verdicts(o), s['pid'], s['client'],
                               s['kind'], span(s), verdicts(s)))
        if s['kind'].startswith('limit'):
            n = int(s['kind'][5:])
            at_once = 1 + sum(1 for o in running if o['kind'].startswith('limit'))
            if at_once > n:
                r['limit'] += 1
                out.append('  limit exceeded: %s: pid %d began at %s with %d '
                           'sections at once (limit %d)'
                           % (s['name'], s['pid'], ms(s['t0']), at_once, n))
            peak[s['name']] = max(peak.get(s['name'], 0), at_once)
    for name, p in sorted(peak.items()):
        out.append('  limit: %s: at most %d at once' % (name, p))

    def kind_of(pid, name, t):
        for s in sections:
            if s['pid'] == pid and s['name'] == name:
                if s['t0'] <= t <= (end if s['t1'] is None else s['t1']):
                    return s['kind']
        return next((s['kind'] for s in sections if s['pid'] == pid and
                     s['name'] == name), meta['kind'])
    top = {}
    for t, name, token, verdict, pid in store:
        if verdict != 'accepted':
            continue
        if kind_of(pid, name, t) in EXCLUSIVE and token < top.get(name, (0,))[0]:
            r['stale'] += 1
            out.append('  stale accepted: %s: token %d of pid %d at %s after '
                       'token %d of pid %d' % (name, token, pid, ms(t),
                                               top[name][0], top[name][1]))
        if token > top.get(name, (-1,))[0]:
            top[name] = (token, pid)

    holders = defaultdict(set)
    for s in sections:
        if s['kind'] in EXCLUSIVE and s['fence'] != '-':
            holders[(s['name'], int(s['fence']))].add(s['pid'])
    for (name, fence), pids in sorted(holders.items()):
        if len(pids) > 1:
            r['dups'] += 1
            out.append('  duplicate token: %s: fence %d held by pids %s'
                       % (name, fence, ', '.join(map(str, sorted(pids)))))

    bound = (meta['ttl_ms'] + meta['stall_bound_ms']) * 10**6
    for w in waits:
        for h in heals:
            due = h + bound
            if not (w['t0'] <= h and (w['t1'] is None or w['t1'] > h)):
                continue
            if w['limit'] is not None and w['t0'] + w['limit'] < due:
                continue
            if (end >= due) if w['t1'] is None else (w['t1'] > due):
                r['stalls'] += 1
                out.append('  stall: pid %d on %s waiting since %s, heal at %s, '
                           '%s by %s' % (w['pid'], w['name'], ms(w['t0']),
                                         ms(h), 'no answer' if w['t1'] is None
                                         else w['how'] + ' at ' + ms(w['t1']),
                                         ms(due)))
                break
        else:
            if w['how'] != 'gaveup' or w['status'] != 69 or \
                    w['limit'] is None or w['t1'] - w['t0'] >= w['limit']:
                continue
            healed = [h for h in heals if h <= w['t1']]
            if healed and not any(f0 <= w['t1'] and (f1 is None or f1 > w['t1'])
                                  for _, f0, f1 in faults):
                r['stalls'] += 1
                out.append('  stall: pid %d on %s gave up with 69 at %s after '
                           '%.0f of its %d ms, no fault active since heal at %s'
                           % (w['pid'], w['name'], ms(w['t1']),
                              (w['t1'] - w['t0']) / 1e6, w['limit'] // 10**6,
                              ms(healed[-1])))

    ok = not (r['stale'] or r['limit'] or r['stalls'] or
              (r['dups'] and meta['dup_ok'] != '1') or
              (r['overlaps'] and meta['inherent'] != '1'))
    out.append('  %d sections, %d faults, %d overlaps%s, %d stale accepted, '
               '%d duplicate tokens%s, %d limit exceeded, %d stalls: %s' % (
                   r['sections'], r['faults'], r['overlaps'],
                   ' (inherent)' if meta['inherent'] == '1' else '',
                   r['stale'], r['dups'],
                   ' (allowed)' if meta['dup_ok'] == '1' else '',
                   r['limit'], r['stalls'], 'ok' if ok else 'FAIL'))
    row = '| %s | %s | %s | %d | %d | %d%s | %d | %d | %d | %d |' % (
        meta['topology'], meta['fault'], meta['kind'], r['sections'],
        r['faults'], r['overlaps'],
        ' (inherent)' if meta['inherent'] == '1' and r['overlaps'] else '',
        r['stale'], r['dups'], r['limit'], r['stalls'])
    return r, ok, row


def main():
    ap = argparse.ArgumentParser(description='Checks partition histories.')
    ap.add_argument('--table', action='store_true',
                    help='also print a markdown table row per HISTDIR')
    ap.add_argument('histdir', nargs='+')
    args = ap.parse_args()
    out, rows, total, all_ok = [], [], defaultdict(int), True
    for d in args.histdir:
        try:
            r, ok, row = check(d, out)
        except Malformed as e:
            print(e, file=sys.stderr)
            return 2
        rows.append(row)
        all_ok = all_ok and ok
        for k, v in r.items():
            total[k] += v
    print('\n'.join(out))
    if args.table:
        print('| topology | fault | kind | sections | faults | overlaps '
              '(inherent?) | stale accepted | duplicate tokens | '
              'limit exceeded | stalls |')
        print('|' + ' --- |' * 10)
        print('\n'.join(rows))
    print('partition: %(sections)d sections, %(faults)d faults, %(overlaps)d '
          'overlaps, %(stale)d stale accepted, %(dups)d duplicate tokens, '
          '%(stalls)d stalls' % total)
    return 0 if all_ok else 1


if __name__ == '__main__':
    sys.exit(main())
