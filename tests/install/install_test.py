#!/usr/bin/env python3
"""meson install, then a program outside the tree built against the result with pkg-config.

usage: install_test.py MESON BUILD_DIR EXAMPLE_C CC [B_SANITIZE]

Installs the build into a temporary DESTDIR and checks: the tools, librocefw.so and .a, one
header directory per layer under include/rocefw/ and rocefw.pc are there; every installed
header compiles alone (no header depends on one that is not installed); tests/install/example.c
builds with `pkg-config --cflags --libs rocefw` (rocefw.pc as installed, its prefix= line moved
into the DESTDIR, as a relocated install would), against the shared library and again against
the static one, and both run.
"""
import glob
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def pkg(env, *args):
    r = run(["pkg-config"] + list(args) + ["rocefw"], env=env)
    check(r.returncode == 0, f"pkg-config {' '.join(args)} rocefw: {r.stderr.strip()}")
    return r.stdout.split()


def relocate_pc(pc, dest):
    """A copy of @pc whose prefix lies inside @dest; returns its directory."""
    d = os.path.join(dest, "pc")
    os.makedirs(d)
    lines = open(pc).read().splitlines()
    check(lines and lines[0].startswith("prefix=/"), f"rocefw.pc starts with prefix=: {lines[:1]}")
    lines[0] = "prefix=" + dest + lines[0][len("prefix="):]
    with open(os.path.join(d, "rocefw.pc"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return d


def private_libs(env):
    """What a static librocefw needs besides the public requirements: Requires.private's
    --libs and the Libs.private line."""
    out = []
    reqs = run(["pkg-config", "--print-requires-private", "rocefw"], env=env).stdout.split()
    for req in reqs:
        out += run(["pkg-config", "--libs", req], env=env).stdout.split()
    r = run(["pkg-config", "--variable=pcfiledir", "rocefw"], env=env)
    for line in open(os.path.join(r.stdout.strip(), "rocefw.pc")):
        if line.startswith("Libs.private:"):
            out += line.split(":", 1)[1].split()
    return out


def headers_compile(cc, inc_root, cflags, tmp):
    """Each installed header alone in a translation unit."""
    bad = []
    for h in sorted(glob.glob(os.path.join(inc_root, "rocefw", "*", "*.h"))):
        rel = os.path.relpath(h, os.path.join(inc_root, "rocefw"))
        tu = os.path.join(tmp, "hdr.c")
        with open(tu, "w") as f:
            f.write(f'#include "{rel}"\nint rocefw_hdr_probe;\n')
        r = run([cc, "-std=gnu11", "-Wall", "-Werror", "-c", tu, "-o", tu + ".o"] + cflags)
        if r.returncode != 0:
            bad.append(f"{rel}: {r.stderr.strip()[:300]}")
    check(not bad, f"every installed header compiles alone {bad}")


def build_and_run(cc, example, cflags, libs, out, env, what):
    r = run([cc, "-std=gnu11", "-Wall", "-Werror", example, "-o", out] + cflags + libs)
    check(r.returncode == 0, f"example builds against the {what} library: {r.stderr.strip()[:600]}")
    if r.returncode != 0:
        return
    r = run([out], env=env)
    print(r.stdout, end="")
    check(r.returncode == 0 and "transport: QP" in r.stdout and "wire:" in r.stdout,
          f"example runs ({what}): exit {r.returncode} {r.stderr.strip()[:300]}")


def main():
    meson, build, example, cc = sys.argv[1:5]
    sanitize = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] not in ("", "none") else None
    with tempfile.TemporaryDirectory() as dest:
        r = run([meson, "install", "-C", build, "--no-rebuild", "--destdir", dest, "--quiet"])
        check(r.returncode == 0, f"meson install --destdir: {r.stderr.strip()[-600:]}")
        pcs = glob.glob(os.path.join(dest, "**", "pkgconfig", "rocefw.pc"), recursive=True)
        check(len(pcs) == 1, f"one rocefw.pc installed: {pcs}")
        if not pcs:
            return 1
        libdir = os.path.dirname(os.path.dirname(pcs[0]))
        prefix = os.path.dirname(glob.glob(os.path.join(dest, "**", "include", "rocefw"),
                                           recursive=True)[0])
        bindir = os.path.join(os.path.dirname(prefix), "bin")
        for tool in ("rocefw-cc", "rocefw-replay", "rocefw-stat", "rocefw-sim"):
            check(os.access(os.path.join(bindir, tool), os.X_OK), f"{tool} installed")
        check(os.path.exists(os.path.join(libdir, "librocefw.a")), "librocefw.a installed")
        check(bool(glob.glob(os.path.join(libdir, "librocefw.so*"))), "librocefw.so installed")
        for layer in ("wire", "cc", "transport", "nic"):
            check(bool(glob.glob(os.path.join(prefix, "rocefw", layer, "*.h"))),
                  f"include/rocefw/{layer}/ installed")
        env = dict(os.environ, PKG_CONFIG_PATH=relocate_pc(pcs[0], dest))
        cflags = pkg(env, "--cflags")
        if sanitize:
            cflags.append("-fsanitize=" + sanitize)
        has_dpdk = os.path.isdir(os.path.join(prefix, "rocefw", "dataplane"))
        if has_dpdk:
            cflags.append("-DROCEFW_EXAMPLE_DPDK")
        headers_compile(cc, prefix, cflags, dest)
        run_env = dict(os.environ, LD_LIBRARY_PATH=libdir)
        build_and_run(cc, example, cflags, pkg(env, "--libs"), os.path.join(dest, "ex"),
                      run_env, "shared")
        # The static library by path, with rocefw.pc's private requirements and Libs.private;
        # DPDK itself stays shared (Debian's static DPDK wants -lsystemd, docs ENVIRONMENT).
        static_libs = [os.path.join(libdir, "librocefw.a")] + \
            [x for x in pkg(env, "--libs") if x != "-lrocefw"] + private_libs(env)
        build_and_run(cc, example, cflags, static_libs, os.path.join(dest, "ex_static"),
                      dict(os.environ), "static")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
