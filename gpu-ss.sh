#!/usr/bin/env bash
# Throwaway: simpleStreams and reduction, alone / new / base alternating with rotation.
set -uo pipefail
root=$(pwd)
S=target/cuda-samples/Samples
mkdir -p /tmp/ss /tmp/red
nvcc -arch=sm_90 -O2 -I $S/../Common -o /tmp/ss/simpleStreams $S/0_Introduction/simpleStreams/simpleStreams.cu || exit 1
nvcc -arch=sm_90 -O2 -I $S/../Common -o /tmp/red/reduction $S/2_Concepts_and_Techniques/reduction/reduction.cpp $S/2_Concepts_and_Techniques/reduction/reduction_kernel.cu || exit 1
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || echo FAILED >&2; e=$(date +%s.%N); python3 -c "print(f'{$e-$s:.3f}')"; }
bench() { # dir prog rounds
  cd $1
  for ((r=0; r<$3; r++)); do
    for k in 0 1 2; do
      w=$(( (k + r) % 3 ))
      case $w in
        0) echo "alone $(t ./$2)";;
        1) rm -f /tmp/n.trace; echo "new $(t env REPRISE_OUTPUT=/tmp/n.trace LD_PRELOAD=$root/target/gpu/libshim.so ./$2)";;
        2) rm -f /tmp/b.trace; echo "base $(t env REPRISE_OUTPUT=/tmp/b.trace LD_PRELOAD=$root/target/gpu-base/libshim.so ./$2)";;
      esac
    done
  done | python3 -c '
import sys, statistics
runs = {}
for line in sys.stdin:
    k, v = line.split(); runs.setdefault(k, []).append(float(v))
a = statistics.median(runs["alone"])
print(sys.argv[1], "alone %.3f" % a, " ".join("%s %.3f (%.2fx) runs %s" % (k, statistics.median(v), statistics.median(v)/a, [round(x/a,2) for x in v]) for k, v in runs.items() if k != "alone"))' $2
  rm -f /tmp/n.trace
  REPRISE_OUTPUT=/tmp/n.trace REPRISE_LOG=info LD_PRELOAD=$root/target/gpu/libshim.so ./$2 2>&1 >/dev/null | grep -E "copied|waited|preparing" | sed 's/^/  new log: /'
  ls -la /tmp/n.trace | awk '{print "  new trace bytes", $5}'
  $root/target/gpu/replayer replay /tmp/n.trace --mode both --compare --iterations 3 2>&1 | tail -3 | sed 's/^/  replay: /'
  cd $root
}
bench /tmp/ss simpleStreams ${SS_ROUNDS:-6}
bench /tmp/red reduction ${RED_ROUNDS:-3}
