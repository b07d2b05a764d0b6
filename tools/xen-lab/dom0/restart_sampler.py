#!/usr/bin/env python3
"""Samplers of the lab's restart scenario (installed in dom0 as /lab/restart_sampler.py).

  restart_sampler.py TAP FE_STATE_PATH BE_STATE_PATH TAP_OUT STATE_OUT STOP_FILE

Writes "EPOCH_MS RX_PACKETS" to TAP_OUT whenever the TAP's rx_packets change (sampled
every 10 ms), and "EPOCH_MS FRONTEND_STATE BACKEND_STATE" to STATE_OUT every 25 ms
(the backend's every 4th sample, "-" otherwise), until STOP_FILE exists (a file, not a
pipe: the daemons would inherit it). Epoch ms: the clock of the daemon's log.
Unit-tested on the host by tests/lab/tools/lab_reports_test.py.
"""

import os
import socket
import struct
import subprocess
import sys
import threading
import time

XS_READ = 2    # xs_wire.h: enum xsd_sockmsg_type
XS_ERROR = 16
XS_HEADER = struct.Struct("<IIII")  # type, req_id, tx_id, len


def epoch_ms():
    return int(time.time() * 1000)


def read_exactly(fd, n):
    b = b""
    while len(b) < n:
        c = os.read(fd, n - len(b))
        if not c:
            raise OSError("xenstore closed")
        b += c
    return b


def xs_read(fd, req_id, path):
    """XS_READ of `path` on a xenstored connection: the value, or "gone" on an error
    reply (the node does not exist)."""
    body = path.encode() + b"\0"
    os.write(fd, XS_HEADER.pack(XS_READ, req_id, 0, len(body)) + body)
    msg_type, _, _, n = XS_HEADER.unpack(read_exactly(fd, XS_HEADER.size))
    value = read_exactly(fd, n).rstrip(b"\0").decode()
    return "gone" if msg_type == XS_ERROR else value


def xs_open():
    """XenStore reads without a fork per sample (a fork costs dom0 tens of ms under TCG
    and starves the daemon being measured): xenstored's socket, else /dev/xen/xenbus;
    ("fork", None) when neither opens (xenstore-read per sample)."""
    for p in ("/run/xenstored/socket", "/var/run/xenstored/socket"):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(p)
            return "socket", s.detach()
        except OSError:
            pass
    try:
        return "xenbus", os.open("/dev/xen/xenbus", os.O_RDWR)
    except OSError:
        return "fork", None


def read_tap_rx(tap):
    try:
        with open("/sys/class/net/%s/statistics/rx_packets" % tap) as f:
            return int(f.read())
    except OSError:
        return -1


def tap_loop(tap, out, stop):
    last = None
    while not stop.is_set():
        rx = read_tap_rx(tap)
        if rx != last:
            out.write("%d %d\n" % (epoch_ms(), rx))
            last = rx
        time.sleep(0.01)


def state_loop(fe_path, be_path, out, stop):
    how, fd = xs_open()
    req_id = k = 0
    out.write("# via %s\n" % how)
    while not stop.is_set():
        values = []
        k += 1
        for path in (fe_path, be_path) if k % 4 == 0 else (fe_path,):
            req_id += 1
            if fd is not None:
                values.append(xs_read(fd, req_id, path))
            else:
                r = subprocess.run(["xenstore-read", path], capture_output=True, text=True)
                values.append(r.stdout.strip() if r.returncode == 0 else "gone")
        out.write("%d %s %s\n" % (epoch_ms(), values[0], values[1] if len(values) > 1 else "-"))
        time.sleep(0.025)


def main(argv):
    if len(argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    tap, fe_path, be_path, tap_out, state_out, stop_file = argv[1:7]
    stop = threading.Event()
    with open(tap_out, "w", buffering=1) as taps, open(state_out, "w", buffering=1) as states:
        threads = [threading.Thread(target=tap_loop, args=(tap, taps, stop)),
                   threading.Thread(target=state_loop, args=(fe_path, be_path, states, stop))]
        for t in threads:
            t.start()
        while not os.path.exists(stop_file):
            time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
