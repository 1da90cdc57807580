#!/usr/bin/env python3
"""answer.py: a server that answers every command with the same bytes.

usage: answer.py PORT REPLY

Listens on 127.0.0.1:PORT and, on each connection, answers each RESP
command it reads (an array of bulk strings, as redlock sends them) with
REPLY, Python escapes such as \\r\\n decoded: a Redis error line too long
to quote whole, or an HTTP server's answer. Prints "ready" once it
listens; exits after 60 s.
"""
import signal
import socket
import sys
import threading

signal.alarm(60)
port = int(sys.argv[1])
reply = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")


def command_end(buf):
    """Where the first whole command in BUF ends, or -1."""
    try:
        i = buf.index(b"\r\n")
        p = i + 2
        for _ in range(int(buf[1:i])):
            j = buf.index(b"\r\n", p)
            p = j + 2 + int(buf[p + 1:j]) + 2
    except ValueError:
        return -1
    return p if p <= len(buf) else -1


def serve(conn):
    buf = b""
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            while (end := command_end(buf)) > 0:
                buf = buf[end:]
                conn.sendall(reply)


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(16)
print("ready", flush=True)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
