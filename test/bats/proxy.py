#!/usr/bin/env python3
"""proxy.py: a slow loopback proxy in front of redis-server, for tests.

usage: proxy.py DELAY [--hold ARGS NTH MARK] LPORT:TPORT...

Each LPORT forwards to TPORT on 127.0.0.1. Without --hold, every request
(each chunk the client sends) waits DELAY seconds on its way. With --hold,
only the NTH command of ARGS arguments waits, and the rest of its
connection behind it; MARK is created once it has gone on. Replies are not
delayed. An LPORT of 0 is one the kernel picks, free for sure (a port
chosen beforehand may be taken by a server of another test meanwhile).
Prints "ready" and the ports, in order, once every one listens; exits
after 60 s.
"""
import queue
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


def down(src, dst):
    """Replies, as they come; once the client is gone they are read and
    dropped until the server closes, so that it never sees a reset (which
    would make it drop requests it has not run yet)."""
    gone = False
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            if not gone:
                try:
                    dst.sendall(chunk)
                except OSError:
                    gone = True
    except OSError:
        pass
    src.close()


def up(src, dst):
    """Requests: read at once, so that nothing the client sent is lost if
    it closes (or resets) before its turn; forwarded in order, a held one
    and all behind it late, as a server reads whatever a closed client
    sent."""
    chunks = queue.Queue()

    def read():
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                chunks.put(chunk)
        except OSError:
            pass
        chunks.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        while True:
            chunk = chunks.get()
            if chunk is None:
                break
            held = slow(chunk)
            if held:
                time.sleep(delay)
            dst.sendall(chunk)
            if held and mark:
                open(mark, "w").close()
    except OSError:
        pass
    # All the client sent went on: end the requests as the client did,
    # and let the server close when it has run them (down() sees it).
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    src.close()


def serve(lport, tport, ready, bound):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", lport))
    srv.listen(16)
    bound.append(srv.getsockname()[1])
    ready.release()
    while True:
        c, _ = srv.accept()
        u = socket.create_connection(("127.0.0.1", tport))
        threading.Thread(target=up, args=(c, u), daemon=True).start()
        threading.Thread(target=down, args=(u, c), daemon=True).start()


ready = threading.Semaphore(0)
bound = []
for a in args:
    lport, tport = map(int, a.split(":"))
    threading.Thread(target=serve, args=(lport, tport, ready, bound),
                     daemon=True).start()
    ready.acquire()
print("ready", *bound, flush=True)
time.sleep(60)
