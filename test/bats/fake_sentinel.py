#!/usr/bin/env python3
"""fake_sentinel.py: a sentinel that misbehaves, for tests.

usage: fake_sentinel.py MODE [PORT]

Listens on a free loopback port and prints "ready PORT". To each
connection, once a command has come: MODE "answer" replies that the master
is at 127.0.0.1:PORT (whatever the name), and that it has no replicas (to
SENTINEL REPLICAS, which redlock sends in the same write), "close" closes
the connection, "hang" never answers. Exits after 60 s.
"""
import signal
import socket
import sys
import threading
import time

signal.alarm(60)
mode = sys.argv[1]
target = sys.argv[2] if len(sys.argv) > 2 else "1"


def serve(conn):
    try:
        if not conn.recv(4096):
            return
        if mode == "answer":
            conn.sendall(b"*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%s\r\n*0\r\n" %
                         (len(target), target.encode()))
            while conn.recv(4096):
                pass
        elif mode == "hang":
            time.sleep(60)
    finally:
        conn.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print("ready %d" % s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
