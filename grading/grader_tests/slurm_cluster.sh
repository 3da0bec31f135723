#!/usr/bin/env bash
# grade.py --slurm against a real single-node Slurm: munged, slurmctld and slurmd started here on
# localhost (no systemd), the example class graded on the simulated toolchain by a job array and a
# merge job, then compared with a one-process grading (slurm_cluster.py says what is checked).
# It runs where Slurm is installed or installable: as root, it installs slurm-wlm and munge with
# apt-get when they are missing. Elsewhere it is skipped (the skip code of grading/contract.json),
# the reason on a line that starts with "SKIPPED:": not root (slurmd must run as root), no apt-get, no package mirror
# answering apt-get update (a machine without network), or no source offering the packages. A
# mirror that answers and an install that still fails is a failure, not a skip
# (test_slurm_install.py checks each case). Every daemon is stopped on the way out.
#   bash grading/grader_tests/slurm_cluster.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${REDUCTION_PYTHON:-python3}
. "$here/../../tools/skip_code.sh"   # $skip_code, CTest's SKIP_RETURN_CODE
. "$here/../../tools/bootstrap.sh"   # reduction_apt_locked: one apt-get run of the project's at a time

skip() { echo "SKIPPED: $*"; exit "$skip_code"; }

# Installs slurm-wlm and munge, or skips when this machine cannot get them.
install_slurm() {
  local missing="Slurm is not installed and apt-get could not install slurm-wlm and munge"
  command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get to install slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  echo "installing slurm-wlm and munge (apt-get)"
  # apt-get update says Hit: or Get: for each source that answered, Err: for each that did not
  # (at quiet level 1, its own default without a terminal: no progress bar, not silent), and
  # exits 0 even when none answered.
  local update status=0
  update=$(apt-get update -o quiet=1 -o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30 2>&1) ||
    status=$?
  if ! grep -qE '^(Hit|Get):' <<<"$update" && grep -qE '^Err:' <<<"$update"; then
    local said
    said=$(grep -m 1 -A 1 -E '^Err:' <<<"$update" | tr -s ' \n' ' ')
    skip "$missing: no package mirror answered apt-get update (no network?): ${said% }"
  fi
  if [ "$status" != 0 ]; then
    echo "error: apt-get update failed (exit $status):"; tail -n 5 <<<"$update"; exit 1
  fi
  local plan
  if ! plan=$(apt-get install --simulate -qq --no-install-recommends slurm-wlm munge 2>&1); then
    if grep -qE 'Unable to locate package|has no installation candidate' <<<"$plan"; then
      skip "$missing: no package source offers them ($(grep -m 1 -E '^E:' <<<"$plan"))"
    fi
    echo "error: apt-get cannot install slurm-wlm and munge:"; tail -n 5 <<<"$plan"; exit 1
  fi
  # The packages' scripts must not start the system's own daemons (policy-rc.d 101: "not now"):
  # this test starts its own and leaves nothing running.
  local deny= install
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && deny=1
  fi
  status=0
  install=$(apt-get install -y -qq --no-install-recommends slurm-wlm munge 2>&1) || status=$?
  [ -z "$deny" ] || rm -f /usr/sbin/policy-rc.d
  if [ "$status" != 0 ]; then
    echo "error: apt-get could not install slurm-wlm and munge (exit $status):"; tail -n 10 <<<"$install"; exit 1
  fi
}

if [ "$(id -u)" != 0 ]; then
  skip "the Slurm test starts slurmd, which needs root (run it as root, as CI does)"
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null ||
   ! command -v sbatch >/dev/null; then
  reduction_apt_locked install_slurm
fi

work=$(mktemp -d /tmp/reduction-slurm.XXXXXX)
pids=()
stop() {
  local status=$?
  set +e
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
    scancel --me >/dev/null 2>&1          # nothing of the test may keep running
    scontrol shutdown >/dev/null 2>&1     # slurmctld and slurmd, the way Slurm stops itself
  fi
  for pid in "${pids[@]}"; do             # wait for them; TERM what is still up after 15 s
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { echo "stopping $pid"; kill "$pid"; wait "$pid" 2>/dev/null; }
  done
  if [ -f "$work/munged.pid" ]; then
    munged_pid=$(cat "$work/munged.pid")
    kill "$munged_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$munged_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "$status" != 0 ] && [ "$status" != "$skip_code" ]; then
    for log in "$work"/slurmctld.log "$work"/slurmd.log; do
      [ -f "$log" ] && { echo "---- last lines of $log"; tail -n 25 "$log"; }
    done
  fi
  rm -rf "$work"
  exit "$status"
}
trap stop EXIT
trap 'exit 130' INT TERM

read -r ctld_port slurmd_port < <("$python" - <<'EOF'
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))
EOF
)

# munge: its own key, socket, pid and log in the temp folder
mkdir -m 0700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 0600 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/seed"

# This machine's CPUs and memory, as slurmd itself sees them, for a node called localhost.
node=$(slurmd -C | head -n 1 | sed 's/^NodeName=[^ ]*/NodeName=localhost/')
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<EOF
ClusterName=reductiontest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
$node State=UNKNOWN
PartitionName=grading Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  state=$(sinfo --noheader --format=%T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || { echo "error: the Slurm node did not come up (state '$state')"; exit 1; }
echo "slurm: slurmctld and slurmd up on localhost ($node)"

"$python" "$here/slurm_cluster.py" --work "$work/run"
