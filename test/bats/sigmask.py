#!/usr/bin/env python3
"""sigmask.py: run a command with signals blocked, as some process
supervisors and CI runners start their children.

usage: sigmask.py SIG[,SIG...] COMMAND [ARG...]   (SIG: CHLD, TERM, ...)
"""
import os
import signal
import sys

blocked = {getattr(signal, "SIG" + s) for s in sys.argv[1].split(",")}
signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
os.execvp(sys.argv[2], sys.argv[2:])
