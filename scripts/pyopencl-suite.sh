#!/usr/bin/env bash
# pyopencl's own test suite as a peer check: each file of its test/ directory runs natively and under
# the shim (PYOPENCL_TEST picks the device), the sets of passing tests must be equal, and each file's
# trace replays in both modes with --compare. Prints one table (also $OUT/pyopencl-suite.md).
#   scripts/pyopencl-suite.sh PYOPENCL_CHECKOUT [DEVICE] [FILES...]
# DEVICE: portable (PoCL, the default) or intel (Intel's CPU runtime, $REPRISE_INTEL_OCL).
# FILES default to the seven the issue names; pytest must be installed in $REPRISE_PYTHON's environment.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
checkout=${1:?usage: scripts/pyopencl-suite.sh PYOPENCL_CHECKOUT [DEVICE] [FILES...]}
device=${2:-portable}
shift $(($# < 2 ? $# : 2))
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(test_wrapper test_array test_algorithm test_clmath test_clrandom test_enqueue_copy test_arrays_in_structs)
. "$here/scripts/env.sh"
python=${REPRISE_PYTHON:-python3}
bin=${BIN:-$here/target/release}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
"$python" -c "import pytest" 2>/dev/null || { echo "pyopencl-suite: pytest is not installed for $python" >&2; exit 2; }
vendors=$(mktemp -d)
case $device in
  intel)
    [ -n "${REPRISE_INTEL_OCL:-}" ] || { echo "pyopencl-suite: REPRISE_INTEL_OCL is not set" >&2; exit 2; }
    echo "$REPRISE_INTEL_OCL" >"$vendors/intel.icd"
    export OCL_ICD_VENDORS=$vendors OCL_ICD_FILENAMES=$REPRISE_INTEL_OCL LD_LIBRARY_PATH="$(dirname "$REPRISE_INTEL_OCL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PYOPENCL_TEST=intel ;;
  *) export PYOPENCL_TEST=$device ;;
esac
# The tests that passed, from pytest's -rA summary.
passing() { sed -n 's/^PASSED \(.*\)$/\1/p' "$1" | sort; }
table="$out/pyopencl-suite.md"
echo "| file ($device) | passed natively | passed under the shim | same set | trace | graph --compare | eager --compare |" >"$table"
echo "| --- | --- | --- | --- | --- | --- | --- |" >>"$table"
failures=0
for file in "${files[@]}"; do
  log="$out/$file"
  (cd "$checkout/test" && "$python" -m pytest -q -rA -p no:cacheprovider "$file.py" >"$log.native" 2>&1)
  (cd "$checkout/test" && REPRISE_OUTPUT="$out/$file.trace" LD_PRELOAD="$bin/libshim.so" "$python" -m pytest -q -rA -p no:cacheprovider "$file.py" >"$log.shim" 2>"$log.shim.err")
  native=$(passing "$log.native" | wc -l) shim=$(passing "$log.shim" | wc -l)
  same=no; diff <(passing "$log.native") <(passing "$log.shim") >/dev/null && same=yes
  size=$(stat -c %s "$out/$file.trace" 2>/dev/null || echo 0)
  verdicts=()
  for mode in graph eager; do
    "$bin/replayer" replay "$out/$file.trace" --mode "$mode" --iterations 2 --compare >"$log.$mode" 2>&1
    verdicts+=("$(sed -n 's/^  comparison: \([A-Za-z]*\) (\(.*\))$/\1: \2/p' "$log.$mode" | head -n 1 | cut -c1-120)")
    [ -n "${verdicts[-1]}" ] || verdicts[-1]="error: $(grep -m1 'error' "$log.$mode" | cut -c1-120)"
  done
  echo "| $file | $native | $shim | $same | $((size / 1024)) KB | ${verdicts[0]} | ${verdicts[1]} |" >>"$table"
  [ "$same" = yes ] && [[ ${verdicts[0]} == passed* ]] && [[ ${verdicts[1]} == passed* ]] || failures=$((failures + 1))
  rm -f "$out/$file.trace"
done
cat "$table"
exit $((failures > 0))
