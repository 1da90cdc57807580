#!/usr/bin/env python3
"""hole.py: loopback ports whose connections are never made, for tests.

usage: hole.py N

Listens on N ports the kernel picks, with a backlog of one that a few
connections of its own fill and never accept: the kernel drops every
further SYN, as a firewall that drops a master's packets does (no reset,
no refusal). Prints the ports, space-separated, once they are full;
exits after 120 s.
"""
import signal
import socket
import sys
import time

signal.alarm(120)
ports, keep = [], []
for _ in range(int(sys.argv[1])):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    keep.append(srv)
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(srv.getsockname())
        except BlockingIOError:
            pass
        keep.append(filler)
    ports.append(str(srv.getsockname()[1]))
time.sleep(0.2)
print(" ".join(ports), flush=True)
while True:
    time.sleep(60)
