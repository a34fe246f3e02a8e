#!/usr/bin/env bash
# Throwaway: simpleStreams and reduction, alone and each build (BUILDS="name=dir ...") alternating with rotation.
set -uo pipefail
root=$(pwd)
S=target/ss-src
mkdir -p /tmp/ss /tmp/red
nvcc -arch=sm_90 -O2 -I $S/Common -o /tmp/ss/simpleStreams $S/simpleStreams/simpleStreams.cu || exit 1
nvcc -arch=sm_90 -O2 -I $S/Common -o /tmp/red/reduction $S/reduction/reduction.cpp $S/reduction/reduction_kernel.cu || exit 1
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || echo FAILED >&2; e=$(date +%s.%N); python3 -c "print(f'{$e-$s:.3f}')"; }
read -ra builds <<< "alone=none $BUILDS"
n=${#builds[@]}
bench() { # dir prog rounds
  cd $1
  for ((r=0; r<$3; r++)); do
    for ((k=0; k<n; k++)); do
      b=${builds[$(( (k + r) % n ))]}; name=${b%%=*}; dir=${b#*=}
      if [ $name = alone ]; then echo "alone $(t ./$2)"; else rm -f /tmp/x.trace; echo "$name $(t env REPRISE_OUTPUT=/tmp/x.trace LD_PRELOAD=$root/$dir/libshim.so ./$2)"; fi
    done
  done | python3 -c '
import sys, statistics
runs = {}
for line in sys.stdin:
    k, v = line.split(); runs.setdefault(k, []).append(float(v))
a = statistics.median(runs["alone"])
print(sys.argv[1], "alone %.3f" % a)
for k, v in runs.items():
    if k != "alone": print("  %s %.3f (%.2fx) runs %s" % (k, statistics.median(v), statistics.median(v)/a, [round(x/a,2) for x in v]))' $2
  for b in $BUILDS; do
    name=${b%%=*}; dir=${b#*=}; rm -f /tmp/n.trace
    REPRISE_OUTPUT=/tmp/n.trace REPRISE_LOG=info LD_PRELOAD=$root/$dir/libshim.so ./$2 2>&1 >/dev/null | grep -E "copied|waited|preparing" | sed "s/^/  $name log: /"
    ls -la /tmp/n.trace | awk -v n=$name '{print "  " n " trace bytes", $5}'
  done
  $root/target/gpu/replayer replay /tmp/n.trace --mode both --compare --iterations 3 2>&1 | grep -E "comparison|what-if" | sed 's/^/  replay: /'
  cd $root
}
bench /tmp/ss simpleStreams ${SS_ROUNDS:-6}
bench /tmp/red reduction ${RED_ROUNDS:-3}
