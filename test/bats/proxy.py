#!/usr/bin/env python3
"""proxy.py: a slow loopback proxy in front of redis-server, for tests.

usage: proxy.py DELAY [--hold ARGS NTH MARK] LPORT:TPORT...

Each LPORT forwards to TPORT on 127.0.0.1. Without --hold, every request
(each chunk the client sends) waits DELAY seconds on its way. With --hold,
only the NTH command of ARGS arguments waits, and the rest of its
connection behind it; MARK is created once it has gone on. Replies are not
delayed. Prints "ready" once every port listens; exits after 60 s.
"""
import signal
import socket
import sys
import threading
import time

signal.alarm(60)
args = sys.argv[1:]
delay = float(args.pop(0))
pattern = mark = None
left = [0]
if args and args[0] == "--hold":
    pattern = b"*" + args[1].encode() + b"\r\n$"
    left[0], mark = int(args[2]), args[3]
    args = args[4:]
counting = threading.Lock()


def slow(chunk):
    if pattern is None:
        return True
    if pattern not in chunk:
        return False
    with counting:
        left[0] -= 1
        return left[0] == 0


def pipe(src, dst, up):
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            held = up and slow(chunk)
            if held:
                time.sleep(delay)
            dst.sendall(chunk)
            if held and mark:
                open(mark, "w").close()
    except OSError:
        pass
    # Only the client side ends the pair, once all it sent went on: a
    # server reads whatever a closed client sent before its EOF.
    if up:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(lport, tport, ready):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", lport))
    srv.listen(16)
    ready.release()
    while True:
        c, _ = srv.accept()
        u = socket.create_connection(("127.0.0.1", tport))
        threading.Thread(target=pipe, args=(c, u, True), daemon=True).start()
        threading.Thread(target=pipe, args=(u, c, False), daemon=True).start()


ready = threading.Semaphore(0)
for a in args:
    lport, tport = map(int, a.split(":"))
    threading.Thread(target=serve, args=(lport, tport, ready),
                     daemon=True).start()
    ready.acquire()
print("ready", flush=True)
time.sleep(60)
