#!/usr/bin/env bash
# grade.py --slurm against a real single-node Slurm: munged, slurmctld and slurmd started here on
# localhost (no systemd), the example class graded on the simulated toolchain by a job array and a
# merge job, then compared with a one-process grading (slurm_cluster.py says what is checked).
# As root it installs slurm-wlm and munge with apt-get when they are missing; without root it is
# skipped (exit 77): slurmd must run as root. Every daemon is stopped on the way out.
#   bash grading/grader_tests/slurm_cluster.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${REDUCTION_PYTHON:-python3}

if [ "$(id -u)" != 0 ]; then
  echo "SKIPPED: the Slurm test starts slurmd, which needs root (run it as root, as CI does)"
  exit 77
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null ||
   ! command -v sbatch >/dev/null; then
  command -v apt-get >/dev/null || { echo "SKIPPED: Slurm is not installed and there is no apt-get"; exit 77; }
  echo "installing slurm-wlm and munge (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # The packages' scripts must not start the system's own daemons (policy-rc.d 101: "not now"):
  # this test starts its own and leaves nothing running.
  deny=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && deny=1
  fi
  status=0
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; } || status=$?
  [ -z "$deny" ] || rm -f /usr/sbin/policy-rc.d
  [ "$status" = 0 ] || { echo "error: apt-get could not install slurm-wlm and munge"; exit 1; }
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
  if [ "$status" != 0 ] && [ "$status" != 77 ]; then
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
