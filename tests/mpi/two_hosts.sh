#!/usr/bin/env bash
# Two hosts as network namespaces: a plan over two ranks, one in each namespace, joined only by a
# veth pair, with MPI told to carry bytes over TCP alone (no shared memory). mpirun runs in the
# first namespace and starts the second "host"'s daemon through a launch agent (as it would
# through ssh), which also gives it a host name of its own. Needs root, ip (iproute2) and
# unshare; exits 77 (CTest: skipped) saying why when it cannot make the namespaces.
#   two_hosts.sh PLACER MPIRUN MODEL
set -uo pipefail

placer=$1
mpirun=$2
model=$3

skip() {
    echo "two_hosts: skipped: $*"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "making network namespaces needs root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
command -v unshare >/dev/null || skip "no unshare command (util-linux)"
# ip netns exec makes / a slave mount in a mount namespace of its own: a chroot whose root is no
# mount point (a CI root) cannot. Tried first, so that nothing is made where it would fail.
unshare --mount sh -c 'mount --make-rslave /' 2>/dev/null ||
    skip "this root cannot be made a slave mount (a chroot?), which ip netns exec needs"

tag=pe$$
ns0=${tag}a ns1=${tag}b
work=$(mktemp -d)
cleanup() {
    ip netns del "$ns0" 2>/dev/null
    ip netns del "$ns1" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns0" 2>"$work/err" || skip "ip netns add failed: $(cat "$work/err")"
ip netns add "$ns1" || skip "ip netns add failed"
ip link add "${tag}v0" type veth peer name "${tag}v1" 2>"$work/err" ||
    skip "no veth pair: $(cat "$work/err")"
ip link set "${tag}v0" netns "$ns0"
ip link set "${tag}v1" netns "$ns1"
ip -n "$ns0" addr add 10.77.0.1/24 dev "${tag}v0"
ip -n "$ns1" addr add 10.77.0.2/24 dev "${tag}v1"
for ns in "$ns0" "$ns1"; do
    ip -n "$ns" link set lo up
done
ip -n "$ns0" link set "${tag}v0" up
ip -n "$ns1" link set "${tag}v1" up

# The launch agent: mpirun calls it as `agent HOST COMMAND...` for the second host.
cat >"$work/agent" <<EOF
#!/bin/sh
shift
exec ip netns exec $ns1 unshare --uts sh -c "hostname placer-second-host && \$*"
EOF
chmod +x "$work/agent"
printf '10.77.0.1 slots=1\n10.77.0.2 slots=1\n' >"$work/hosts"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 180 ip netns exec "$ns0" "$mpirun" --bind-to none --hostfile "$work/hosts" \
    --timeout 150 --mca plm_rsh_agent "$work/agent" \
    --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 \
    --mca oob_tcp_if_include 10.77.0.0/24 -x PATH -np 2 \
    "$placer" run "$model" --devices a:vcpu,b:vcpu --map b=rank1/vcpu1 --split '*=a,b' \
    --iterations 3 --db "$work/workspace.db" >"$work/out" 2>"$work/err"
code=$?
cat "$work/out"
if [ $code -ne 0 ]; then
    cat "$work/err" >&2
    echo "two_hosts: FAIL: mpirun exited with $code" >&2
    exit 1
fi
for expected in "reference check: ok" "rank 1 (host placer-second-host)" "b          on rank1/vcpu1"; do
    if ! grep -qF "$expected" "$work/out"; then
        echo "two_hosts: FAIL: the report lacks '$expected'" >&2
        exit 1
    fi
done
echo "two_hosts: PASS: a split over two hosts joined by TCP alone matches the reference"
