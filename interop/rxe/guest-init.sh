#!/bin/sh
# PID 1 of the rxe guest (busybox sh). Kernel command line parameters:
#   rxe.ip=192.0.2.1/24   IPv4 address for eth0
#   rxe.name=NAME         host name (shown in the prompt markers)
# After setup, it prints "@@READY" on ttyS0 and then executes one shell command line per
# line read from ttyS0 (the host drives it with guestctl.py). PID 1 never exits: the
# command loop is respawned if it dies.
export PATH=/usr/bin:/usr/sbin:/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /tmp /run /var/run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
mount -t configfs configfs /sys/kernel/config 2>/dev/null

ip_arg=; name=rxe
for a in $(cat /proc/cmdline); do
    case $a in
        rxe.ip=*) ip_arg=${a#rxe.ip=} ;;
        rxe.name=*) name=${a#rxe.name=} ;;
    esac
done
hostname "$name"

while read -r m; do
    insmod /lib/modules/$m.ko 2>/dev/null || echo "insmod $m failed" >/dev/ttyS0
done < /lib/modules/order
mount -t configfs configfs /sys/kernel/config 2>/dev/null

ip link set lo up
ip link set eth0 up
[ -n "$ip_arg" ] && ip addr add "$ip_arg" dev eth0
rdma link add rxe0 type rxe netdev eth0
# make the IPv6 link-local address (and so GID 0) appear before anyone uses it
i=0; while [ $i -lt 50 ] && ! ip -6 addr show dev eth0 scope link | grep -q 'inet6'; do
    sleep 0.1; i=$((i+1)); done
i=0; while [ $i -lt 50 ] && ip -6 addr show dev eth0 | grep -q tentative; do
    sleep 0.1; i=$((i+1)); done

cat > /cmdloop <<'L'
exec </dev/ttyS0 >/dev/ttyS0 2>&1
stty raw -echo 2>/dev/null
echo "@@READY $(hostname)"
while :; do
    IFS= read -r line || { sleep 0.2; continue; }
    [ -n "$line" ] || continue
    sh -c "$line"
done
L
while :; do
    /bin/sh /cmdloop
    sleep 1
done
