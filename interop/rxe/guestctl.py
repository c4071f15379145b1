#!/usr/bin/python3
"""Drive an rxe guest over its serial port (a QEMU socket chardev).

  guestctl.py wait SOCK LOGFILE [TIMEOUT]   wait until the guest printed "@@READY"
  guestctl.py run SOCK [TIMEOUT] -- SCRIPT   run SCRIPT (sh) in the guest, print its
                                             output, exit with its exit status

The guest's init reads one command line at a time from ttyS0 (see guest-init.sh). SCRIPT
is sent base64-encoded, so it may contain anything (several lines, '&', quotes). Standard
library only.
"""
import base64, os, random, socket, sys, time


def wait_ready(logfile, timeout):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(logfile, "rb") as f:
                if b"@@READY" in f.read():
                    return 0
        except FileNotFoundError:
            pass
        time.sleep(0.2)
    sys.stderr.write("guestctl: %s: no @@READY within %ss\n" % (logfile, timeout))
    return 1


def run(sock_path, timeout, script):
    token = "%08x" % random.getrandbits(32)
    b64 = base64.b64encode(script.encode()).decode()
    line = ("echo %s | base64 -d > /tmp/cmd.%s; sh /tmp/cmd.%s; echo \"@@RC=$? %s\"\n"
            % (b64, token, token, token))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.settimeout(0.1)
    try:  # drop whatever is pending (console noise)
        while s.recv(65536):
            pass
    except (socket.timeout, BlockingIOError):
        pass
    s.sendall(line.encode())
    buf = b""
    marker = (" %s" % token).encode()
    end = time.time() + timeout
    while time.time() < end:
        try:
            d = s.recv(65536)
            if not d:
                break
            buf += d
        except socket.timeout:
            pass
        i = buf.find(b"@@RC=")
        while i >= 0:
            nl = buf.find(b"\n", i)
            if nl < 0:
                break
            tail = buf[i:nl].rstrip(b"\r")
            if tail.endswith(marker):
                out = buf[:i].decode(errors="replace")
                sys.stdout.write(out)
                sys.stdout.flush()
                return int(tail[5:].split()[0])
            i = buf.find(b"@@RC=", nl)
    sys.stdout.write(buf.decode(errors="replace"))
    sys.stderr.write("guestctl: timeout after %ss running: %s\n" % (timeout, script))
    return 124


def main(argv):
    if len(argv) >= 4 and argv[1] == "wait":
        return wait_ready(argv[3], float(argv[4]) if len(argv) > 4 else 120)
    if len(argv) >= 4 and argv[1] == "run":
        rest = argv[3:]
        timeout = 120.0
        if rest[0] != "--":
            timeout = float(rest[0])
            rest = rest[1:]
        if rest[0] == "--":
            rest = rest[1:]
        return run(argv[2], timeout, " ".join(rest))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
