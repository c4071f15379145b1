#!/bin/bash
# Build the Linux rdma_rxe guest used by the interop harness.
#
# Idempotent. Run as root on Debian 12. Installs the missing host tools with apt-get,
# then fetches the guest contents with `apt-get download` + `dpkg -x` (nothing is installed
# on the host for the guest) and builds:
#   interop/.cache/rxe/vmlinuz        the Debian 12 kernel (the version linux-image-amd64 depends on)
#   interop/.cache/rxe/initramfs.gz   busybox + modules + rdma-core/perftest/iproute2 + init,
#                                     python3 + pyverbs + rdma-core's test suite (/opt/rdma-core/tests)
#   interop/.cache/rxe/versions.txt   exact versions of everything that went in
#
# The guest's init (see guest-init.sh) reads ip=ADDR/LEN from rxe.ip= on the kernel command
# line, loads the modules, adds rxe0 on eth0 and then executes shell command lines that the
# host sends over the serial port (see guestctl.py).
#
# RXE_PEER=path adds the interop peer (build/interop/rocefw-interop-peer, a host build linked
# against libibverbs: the guest is the same Debian release) as /usr/bin/rocefw-interop-peer;
# the initramfs is rebuilt when that file changes. interop/run sets it.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CACHE=${RXE_CACHE:-$TOP/interop/.cache/rxe}
DEBS=$CACHE/debs
ROOT=$CACHE/root          # dpkg -x of every downloaded package
STAGE=$CACHE/initramfs    # what goes into the initramfs
export DEBIAN_FRONTEND=noninteractive

log() { echo "build-guest: [${SECONDS}s] $*" >&2; }

[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

# ---- host tools -------------------------------------------------------------------------
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
command -v tcpdump >/dev/null || need+=(tcpdump)
command -v tshark >/dev/null || need+=(tshark)
command -v mergecap >/dev/null || need+=(wireshark-common)
command -v nft >/dev/null || need+=(nftables)
command -v ip >/dev/null || need+=(iproute2)
command -v /usr/bin/python3 >/dev/null || need+=(python3)
command -v ldd >/dev/null || need+=(libc-bin)
command -v file >/dev/null || need+=(file)
if [ ${#need[@]} -gt 0 ]; then
    log "installing host packages: ${need[*]}"
    apt-get update -qq
    # tshark asks whether non-root users may capture; the default (no) is fine.
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

log "host tools ok"
# ---- guest packages ---------------------------------------------------------------------
# no package lists at all (fresh container): fetch them
apt-cache show linux-image-amd64 >/dev/null 2>&1 || apt-get update -qq
KPKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$KPKG" ] || { echo "cannot resolve linux-image-amd64" >&2; exit 1; }
KVER=${KPKG#linux-image-}

TOPPKGS=(rdma-core ibverbs-providers libibverbs1 librdmacm1 ibverbs-utils perftest
         rdmacm-utils iproute2)
# rdma-core's own test suite (interop/rxe/pyverbs-rxe.sh runs it on rxe0): pyverbs ships it under
# /usr/share/doc/rdma-core/tests; the interpreter and the standard library come from the
# python3.11 packages (python3-minimal/python3 themselves only add symlinks and docs).
PYVER=3.11
PYPKGS=(python3-pyverbs "python$PYVER-minimal" "libpython$PYVER-minimal" "libpython$PYVER-stdlib")
TOPPKGS+=("${PYPKGS[@]}")
# Shared-library packages they depend on (recursively). Only the libraries that ldd
# reports end up in the initramfs; the rest is just unpacked in the cache.
mapfile -t LIBPKGS < <(apt-cache depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances "${TOPPKGS[@]}" 2>/dev/null |
    grep -E '^lib[a-z0-9]' | grep -vE '^lib(perl|pam|semanage|debian-installer|newt|slang|file-|text-|number-|gdbm)' |
    sort -u)
PKGS=("$KPKG" "${TOPPKGS[@]}" "${LIBPKGS[@]}" libgcc-s1 libc6)
mapfile -t PKGS < <(printf '%s\n' "${PKGS[@]}" | sort -u)

# Candidate versions, in one apt-cache call (apt-cache policy costs a second or two per call).
declare -A VER=()
get_versions() {
    while read -r pkg ver; do VER[$pkg]=$ver; done < <(
        apt-cache show --no-all-versions "${PKGS[@]}" | awk '/^Package:/{p=$2} /^Version:/{print p, $2}')
}
get_versions
debfile() {  # the downloaded .deb of package $1 (apt-get download writes an epoch ':' as %3a)
    local v=${VER[$1]:-none}
    ls "$DEBS/${1}_${v//:/%3a}_"*.deb 2>/dev/null | head -1
}

mkdir -p "$DEBS" "$ROOT"
find_missing() {
    missing=()
    for p in "${PKGS[@]}"; do
        [ -n "$(debfile "$p")" ] || missing+=("$p")
    done
}
find_missing
if [ ${#missing[@]} -gt 0 ]; then
    # something new to fetch: refresh the lists first (security updates move versions)
    apt-get update -qq
    get_versions
    find_missing
fi
if [ ${#missing[@]} -gt 0 ]; then
    log "downloading ${#missing[@]} packages: ${missing[*]}"
    (cd "$DEBS" && apt-get download -qq -o APT::Sandbox::User=root "${missing[@]}")
fi

# Modules for the guest, in insmod order (there is no modules.dep to let modprobe work it out).
MODS=(configfs crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs iw_cm ib_cm rdma_cm
      rdma_ucm rdma_rxe failover net_failover virtio_ring virtio virtio_pci_legacy_dev
      virtio_pci_modern_dev virtio_pci virtio_net)

stamp=$CACHE/.extracted
if [ ! -f "$stamp" ] || [ -n "$(find "$DEBS" -name '*.deb' -newer "$stamp")" ]; then
    log "extracting packages"
    rm -rf "$ROOT"; mkdir -p "$ROOT"
    for p in "${PKGS[@]}"; do
        deb=$(debfile "$p")
        if [ "$p" = "$KPKG" ]; then
            # the kernel package unpacks to about 400 MB: take only vmlinuz and our modules
            pats=('./boot/vmlinuz-*')
            for m in "${MODS[@]}"; do pats+=("*/$m.ko" "*/$m.ko.xz" "*/$m.ko.zst"); done
            dpkg-deb --fsys-tarfile "$deb" |
                tar -x -C "$ROOT" --wildcards --no-anchored "${pats[@]}" 2>/dev/null || true
        else
            dpkg -x "$deb" "$ROOT"
        fi
    done
    touch "$stamp"
fi

# ---- initramfs -----------------------------------------------------------------------------
MODDIR=$ROOT/lib/modules/$KVER
[ -d "$MODDIR" ] || MODDIR=$ROOT/usr/lib/modules/$KVER

if [ -f "$CACHE/initramfs.gz" ] && [ -f "$CACHE/vmlinuz" ] && [ "${RXE_REBUILD:-0}" = 0 ] &&
   [ "$CACHE/initramfs.gz" -nt "$stamp" ] && [ "$CACHE/initramfs.gz" -nt "$HERE/guest-init.sh" ] &&
   [ "$CACHE/initramfs.gz" -nt "$0" ] &&
   { [ -z "${RXE_PEER:-}" ] || [ "$CACHE/initramfs.gz" -nt "$RXE_PEER" ]; } &&
   { [ -z "${RXE_PEER:-}" ] || [ -f "$CACHE/.with-peer" ]; } &&
   { [ -n "${RXE_PEER:-}" ] || [ ! -f "$CACHE/.with-peer" ]; }; then
    log "up to date: $CACHE/initramfs.gz (RXE_REBUILD=1 forces a rebuild)"
    exit 0
fi
log "staging initramfs for kernel $KVER"
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,sbin,etc,proc,sys,dev,tmp,run,lib/modules,lib/x86_64-linux-gnu,lib64}
mkdir -p "$STAGE"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,var/run}
GLIB=$STAGE/lib/x86_64-linux-gnu
cp /bin/busybox "$STAGE/bin/busybox"
for a in $("$STAGE/bin/busybox" --list); do
    [ -e "$STAGE/bin/$a" ] || ln -s busybox "$STAGE/bin/$a"
done
: > "$STAGE/lib/modules/order"
for m in "${MODS[@]}"; do
    f=$(find "$MODDIR" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -1)
    [ -n "$f" ] || { echo "module $m not found in $MODDIR" >&2; exit 1; }
    case $f in
        *.xz) xz -dc "$f" > "$STAGE/lib/modules/$m.ko" ;;
        *.zst) zstd -qdc "$f" > "$STAGE/lib/modules/$m.ko" ;;
        *) cp "$f" "$STAGE/lib/modules/$m.ko" ;;
    esac
    echo "$m" >> "$STAGE/lib/modules/order"
done

log "modules staged; collecting programs"
# Programs from the extracted tree (everything rdma-core, perftest, rdmacm-utils and
# ibverbs-utils ship, plus ip/rdma/tc/bridge from iproute2).
BINS=()
for d in usr/bin usr/sbin sbin bin; do
    [ -d "$ROOT/$d" ] || continue
    for f in "$ROOT/$d"/*; do
        [ -f "$f" ] && [ ! -L "$f" ] || continue
        file -b "$f" | grep -q ELF || continue
        BINS+=("$f")
    done
done
for f in "${BINS[@]}"; do
    cp -a "$f" "$STAGE/usr/bin/"
done
ln -s "python$PYVER" "$STAGE/usr/bin/python3"

# Python: the standard library without what neither pyverbs nor unittest use (tests, IDLE, Tk,
# pip/venv, 2to3, docs data; about 10 MB of 30), and of the C modules only those whose
# libraries are small or needed: no _ssl/_hashlib (libcrypto; hashlib falls back to its
# built-in digests), sqlite, dbm, curses, readline, nis, and no CPython test modules.
PYLIB=usr/lib/python$PYVER
[ -f "$ROOT/$PYLIB/os.py" ] || { echo "no $PYLIB in the extracted packages" >&2; exit 1; }
mkdir -p "$STAGE/$PYLIB"
tar -C "$ROOT/$PYLIB" -c --exclude=./test --exclude=./idlelib --exclude=./tkinter \
    --exclude=./turtledemo --exclude=./turtle.py --exclude=./ensurepip --exclude=./lib2to3 \
    --exclude=./pydoc_data --exclude=./distutils --exclude=./venv --exclude=./sqlite3 \
    --exclude=./curses --exclude='./config-*' --exclude=__pycache__ \
    --exclude='./lib-dynload/_test*' --exclude='./lib-dynload/_ctypes_test*' \
    --exclude='./lib-dynload/xx*' --exclude='./lib-dynload/_xx*' \
    --exclude='./lib-dynload/_ssl.*' --exclude='./lib-dynload/_hashlib.*' \
    --exclude='./lib-dynload/_sqlite3.*' --exclude='./lib-dynload/_dbm.*' \
    --exclude='./lib-dynload/_gdbm.*' --exclude='./lib-dynload/_curses*' \
    --exclude='./lib-dynload/readline.*' --exclude='./lib-dynload/nis.*' \
    --exclude='./lib-dynload/ossaudiodev.*' --exclude='./lib-dynload/_tkinter.*' . |
    tar -C "$STAGE/$PYLIB" -x
# pyverbs (its Cython modules link libibverbs, librdmacm, libmlx5 and libefa: collected below)
mkdir -p "$STAGE/usr/lib/python3/dist-packages"
cp -a "$ROOT/usr/lib/python3/dist-packages/pyverbs" "$STAGE/usr/lib/python3/dist-packages/"
# the test suite, unpacked (Debian gzips most of its files)
TESTS=$ROOT/usr/share/doc/rdma-core/tests
[ -f "$TESTS/__init__.py" ] || { echo "no $TESTS in python3-pyverbs" >&2; exit 1; }
mkdir -p "$STAGE/opt/rdma-core"
cp -a "$TESTS" "$STAGE/opt/rdma-core/tests"
find "$STAGE/opt/rdma-core/tests" -name '*.gz' -exec gunzip -f {} +
mapfile -t PYSOS < <(find "$STAGE/$PYLIB/lib-dynload" "$STAGE/usr/lib/python3/dist-packages" -name '*.so')
rm -f "$CACHE/.with-peer"
if [ -n "${RXE_PEER:-}" ]; then
    [ -x "$RXE_PEER" ] || { echo "RXE_PEER=$RXE_PEER: not an executable" >&2; exit 1; }
    install -m 0755 "$RXE_PEER" "$STAGE/usr/bin/rocefw-interop-peer"
    BINS+=("$STAGE/usr/bin/rocefw-interop-peer")   # its libraries are collected below
fi
# busybox applets must not shadow the real ip/rdma etc: put /usr/bin first in PATH (init).

# rdma-core providers (librxe) and their config (dlopen'ed: ldd cannot see them).
LIBDIRS=$(find "$ROOT" -name '*.so*' -printf '%h\n' | sort -u | tr '\n' ':')
PROVDIR=$(dirname "$(find "$ROOT" -name 'librxe-rdmav*.so' | head -1)")
mkdir -p "$STAGE/usr/lib/x86_64-linux-gnu/libibverbs" "$STAGE/etc/libibverbs.d"
cp -a "$PROVDIR"/librxe-rdmav*.so "$STAGE/usr/lib/x86_64-linux-gnu/libibverbs/"
cp -a "$ROOT/etc/libibverbs.d/rxe.driver" "$STAGE/etc/libibverbs.d/"
[ -d "$ROOT/etc/rdma" ] && cp -a "$ROOT/etc/rdma" "$STAGE/etc/" || true
[ -d "$ROOT/etc/iproute2" ] && cp -a "$ROOT/etc/iproute2" "$STAGE/etc/" || true

log "programs staged; collecting libraries"
# Shared libraries: ldd against the extracted tree, extracted copies preferred.
declare -A seen=()
copy_lib() {
    local src=$1 name; name=$(basename "$src")
    [ -n "${seen[$name]:-}" ] && return 0
    seen[$name]=1
    cp -L "$src" "$GLIB/$name"
}
# (the lib64/ld-linux symlink in libc6 is absolute: take the real file)
LDSO=$(find "$ROOT" -name 'ld-linux-x86-64.so.2' -type f | head -1)
copy_lib "$LDSO"
ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$STAGE/lib64/ld-linux-x86-64.so.2"
unresolved=0
while read -r line; do   # one ldd call for all files: "file:" headers, then "lib => path"
    case $line in
        *"not found"*) echo "unresolved: $line" >&2; unresolved=1 ;;
        *"=> /"*) set -- $line; copy_lib "$3" ;;
    esac
done < <(LD_LIBRARY_PATH=$LIBDIRS ldd "${BINS[@]}" "${PYSOS[@]}" \
             "$STAGE"/usr/lib/x86_64-linux-gnu/libibverbs/*.so 2>/dev/null || true)
[ $unresolved = 0 ] || { echo "unresolved libraries" >&2; exit 1; }
# rping/ucmatose use pthread_cancel/pthread_exit, which dlopen libgcc_s.so.1.
copy_lib "$(find "$ROOT" -name 'libgcc_s.so.1' | head -1)"
# librdmacm's providers/rsocket preload are not needed.
echo "/lib/x86_64-linux-gnu" > "$STAGE/etc/ld.so.conf"

cat > "$STAGE/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
P
echo "root:x:0:" > "$STAGE/etc/group"
echo "127.0.0.1 localhost" > "$STAGE/etc/hosts"
printf '%s\n' "tcp 6" "udp 17" > "$STAGE/etc/protocols"
install -m 0755 "$HERE/guest-init.sh" "$STAGE/init"

# versions
{
    echo "kernel: $KPKG ${VER[$KPKG]} ($KVER)"
    for p in rdma-core ibverbs-providers libibverbs1 librdmacm1 ibverbs-utils perftest \
             rdmacm-utils iproute2 "${PYPKGS[@]}"; do
        echo "$p: ${VER[$p]}"
    done
    echo "busybox-static: $(dpkg-query -W -f='${Version}' busybox-static)"
} > "$CACHE/versions.txt"
cp "$CACHE/versions.txt" "$STAGE/etc/rxe-versions.txt"

log "writing initramfs"
find "$STAGE" -exec touch -h -d @0 {} +   # reproducible archive: fixed mtimes
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z |
    cpio --null -o -H newc --quiet --reproducible) | gzip -6 -n > "$CACHE/initramfs.gz.tmp"
mv "$CACHE/initramfs.gz.tmp" "$CACHE/initramfs.gz"
[ -z "${RXE_PEER:-}" ] || touch "$CACHE/.with-peer"
cp "$ROOT/boot/vmlinuz-$KVER" "$CACHE/vmlinuz"
log "done: $CACHE/vmlinuz $CACHE/initramfs.gz ($(du -h "$CACHE/initramfs.gz" | cut -f1))"
cat "$CACHE/versions.txt" >&2
