#!/usr/bin/env python3
"""Khronos OpenCL-CTS under the shim: the same sub-tests pass natively and recorded, and each trace
replays in graph and eager mode without a crash.

    scripts/opencl_cts.py CTS_BUILD [--tests test_basic,test_events,...] [--devices pocl,intel]
                          [--chunk N [--chunks FIRST-LAST]] [--cts-args ARGS] [--out DIR] [--timeout S] [--target-dir DIR]

CTS_BUILD is a CMake build of KhronosGroup/OpenCL-CTS (fetched and built elsewhere, never copied
here), for example:

    cmake -S OpenCL-CTS -B cts-build -DCL_INCLUDE_DIR=OpenCL-Headers -DSPIRV_INCLUDE_DIR=/usr/include \\
          -DCL_LIB_DIR=/usr/lib/x86_64-linux-gnu -DOPENCL_LIBRARIES=OpenCL -DCMAKE_BUILD_TYPE=Release
    cmake --build cts-build --target test_basic test_events test_buffers test_profiling

Each test binary runs on one device at a time (the ICD loader sees that device's driver alone), with
CL_CONFORMANCE_RESULTS_FILENAME naming where it writes each sub-test's verdict. With --chunk N, a
binary's sub-tests (`--list`) run N at a time, each chunk natively, recorded and replayed on its own:
a sub-test that hangs costs its chunk, and traces stay small; --chunks 5-9 runs only those. --cts-args passes options to every run
(`-w`, the harness's wimpy mode, natively and under the shim alike). Writes OUT/cts.md,
OUT/cts.json and logs; exits 1 if a sub-test's verdict changes under the shim or a replay dies of a
signal, 2 on bad input. Python standard library only."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TESTS = "test_basic,test_events,test_buffers,test_profiling"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cts_build", help="a CMake build directory of OpenCL-CTS")
    parser.add_argument("--tests", default=DEFAULT_TESTS, help="comma-separated test binaries")
    parser.add_argument("--devices", default="pocl,intel", help="pocl and/or intel (intel needs $REPRISE_INTEL_OCL)")
    parser.add_argument("--out", default=str(ROOT / "target/opencl-cts"))
    parser.add_argument("--timeout", type=int, default=900, help="seconds for one run of one test binary (or chunk)")
    parser.add_argument("--chunk", type=int, default=0, help="run a binary's sub-tests this many at a time (0: all at once)")
    parser.add_argument("--chunks", default="", help="with --chunk: only chunks FIRST-LAST (1-based), to split a binary over several runs")
    parser.add_argument("--cts-args", default="", help="options for every run of a test binary (space-separated)")
    parser.add_argument("--keep-traces", action="store_true", help="keep each trace after its replays (they can take GBs)")
    parser.add_argument("--target-dir", default=os.environ.get("REPRISE_TARGET_DIR", str(ROOT / "target/release")),
                        help="where libshim.so and replayer are")
    return parser.parse_args()


def device_environment(device, out):
    """The environment in which the ICD loader finds `device`'s driver and no other."""
    environment = dict(os.environ, CL_DEVICE_TYPE="CL_DEVICE_TYPE_ALL")
    vendors = out / f"{device}-icd"
    vendors.mkdir(parents=True, exist_ok=True)
    if device == "pocl":
        library = "libpocl.so.2"
    elif device == "intel":
        library = os.environ.get("REPRISE_INTEL_OCL", "")
        if not Path(library).is_file():
            sys.exit("opencl_cts: --devices intel needs REPRISE_INTEL_OCL, the path of libintelocl.so (. scripts/env.sh)")
        environment["LD_LIBRARY_PATH"] = ":".join([str(Path(library).parent)] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p])
    else:
        sys.exit(f"opencl_cts: unknown device {device!r} (pocl, intel)")
    (vendors / f"{device}.icd").write_text(library + "\n")
    environment["OCL_ICD_VENDORS"] = str(vendors)
    environment.pop("OCL_ICD_FILENAMES", None)
    return environment


def find_binary(build, test):
    found = sorted(Path(build).rglob(test))
    found = [path for path in found if path.is_file() and os.access(path, os.X_OK)]
    return found[0] if found else None


def run(argv, environment, log, timeout, cwd):
    """Exit code (negative: the signal that killed it; None: timeout) and seconds."""
    started = time.perf_counter()
    with open(f"{log}.out", "w") as out, open(f"{log}.err", "w") as err:
        try:
            code = subprocess.run(argv, env=environment, stdout=out, stderr=err, timeout=timeout, cwd=cwd).returncode
        except subprocess.TimeoutExpired:
            code = None
    return code, time.perf_counter() - started


def verdicts(path):
    """Sub-test name -> pass / fail / skip, as the CTS harness wrote them."""
    try:
        return json.loads(Path(path).read_text()).get("results", {})
    except (OSError, ValueError):
        return {}


def describe(code):
    if code is None:
        return "timeout"
    if code < 0:
        return f"signal {-code}"
    return "ok" if code == 0 else f"exit {code}"


def subtest_chunks(binary, size):
    """The binary's sub-tests in chunks of `size` (one chunk naming none: all of them)."""
    if size <= 0:
        return [[]]
    listed = subprocess.run([str(binary), "--list"], capture_output=True, text=True).stdout.split()
    return [listed[start:start + size] for start in range(0, len(listed), size)] or [[]]


def wanted(number, chunks):
    """Whether chunk `number` lies in FIRST-LAST (every chunk when none is given)."""
    if not chunks:
        return True
    first, _, last = chunks.partition("-")
    return int(first) <= number <= int(last or first)


def check(binary, device, out, args, tools, subtests, chunk):
    """One run of `binary` (only `subtests`, if any; `chunk`: suffixes naming them in files and in
    the table) natively and recorded on `device`, and the trace's replays."""
    environment = device_environment(device, out)
    name = f"{device}-{binary.name}{chunk[0]}"
    log = out / "logs" / name
    work = Path(tempfile.mkdtemp(prefix=f"cts-{name}-", dir=out))
    native_results, shim_results, trace = work / "native.json", work / "shim.json", out / "traces" / f"{name}.trace"
    argv = [str(binary)] + args.cts_args.split() + subtests
    native_code, native_s = run(argv, dict(environment, CL_CONFORMANCE_RESULTS_FILENAME=str(native_results)),
                                f"{log}.native", args.timeout, work)
    shim_environment = dict(environment, CL_CONFORMANCE_RESULTS_FILENAME=str(shim_results),
                            LD_PRELOAD=str(tools / "libshim.so"), REPRISE_OUTPUT=str(trace))
    shim_code, shim_s = run(argv, shim_environment, f"{log}.shim", args.timeout, work)
    native, shim = verdicts(native_results), verdicts(shim_results)
    changed = sorted(test for test in set(native) | set(shim) if native.get(test) != shim.get(test))
    row = {"device": device, "test": binary.name + chunk[1], "native": describe(native_code), "shim": describe(shim_code),
           "native_s": round(native_s, 1), "shim_s": round(shim_s, 1),
           "passed_native": sum(v == "pass" for v in native.values()),
           "passed_shim": sum(v == "pass" for v in shim.values()), "subtests": len(native),
           "changed": changed}
    for mode in ("graph", "eager"):
        if not trace.exists():
            row[mode] = "no trace"
            continue
        argv = [str(tools / "replayer"), "replay", str(trace), "--mode", mode, "--iterations", "1", "--compare", "--json"]
        code, _ = run(argv, environment, f"{log}.{mode}", args.timeout, work)
        row[mode] = replay_verdict(code, Path(f"{log}.{mode}.out"), Path(f"{log}.{mode}.err"))
    row["trace_mb"] = round(trace.stat().st_size / 1e6) if trace.exists() else 0
    if not args.keep_traces:
        trace.unlink(missing_ok=True)
    return row


def replay_verdict(code, report, err):
    """A replay's outcome: its comparison, or why it stopped; a signal is a crash."""
    if code is None or code < 0:
        return describe(code)
    try:
        comparison = json.loads(report.read_text()).get("comparison") or {}
    except (OSError, ValueError):
        lines = [line for line in err.read_text().splitlines() if line.strip()] if err.exists() else []
        return f"exit {code}: {lines[0][:120] if lines else ''}"
    verdict = "pass" if comparison.get("passed") and comparison.get("compared") else \
        "nothing compared" if comparison.get("passed") else f"{len(comparison.get('mismatches', []))} differ"
    return f"{verdict} ({comparison.get('compared', 0)} compared)" if code == 0 else f"exit {code}, {verdict}"


def crashed(verdict):
    return verdict.startswith(("signal", "timeout"))


def table(rows):
    lines = ["| device | test | sub-tests passed natively | under the shim | changed verdicts | graph replay | eager replay |",
             "| --- | --- | ---: | ---: | --- | --- | --- |"]
    for row in rows:
        changed = ", ".join(row["changed"][:5]) + (" ..." if len(row["changed"]) > 5 else "") if row["changed"] else "none"
        lines.append(f"| {row['device']} | {row['test']} | {row['passed_native']} of {row['subtests']} ({row['native']}, "
                     f"{row['native_s']} s) | {row['passed_shim']} ({row['shim']}, {row['shim_s']} s) | {changed} | "
                     f"{row['graph']} | {row['eager']} |")
    return "\n".join(lines) + "\n"


def main():
    args = parse_args()
    tools = Path(args.target_dir).resolve()
    for needed in ("libshim.so", "replayer"):
        if not (tools / needed).is_file():
            sys.exit(f"opencl_cts: {tools / needed} is missing: run `cargo build --release` (or give --target-dir)")
    out = Path(args.out).resolve()
    for folder in ("logs", "traces"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    rows, failed = [], False
    for test in args.tests.split(","):
        binary = find_binary(args.cts_build, test)
        if binary is None:
            print(f"opencl_cts: {test} is not built under {args.cts_build}", file=sys.stderr)
            sys.exit(2)
        chunks = subtest_chunks(binary, args.chunk)
        for device in args.devices.split(","):
            for index, subtests in enumerate(chunks):
                if not wanted(index + 1, args.chunks):
                    continue
                chunk = (f"-{index + 1}", f" {subtests[0]}..{subtests[-1]}") if len(chunks) > 1 else ("", "")
                row = check(binary, device, out, args, tools, subtests, chunk)
                rows.append(row)
                # A chunk that hangs natively too is the runtime's, not the shim's.
                failed |= bool(row["changed"]) or crashed(row["graph"]) or crashed(row["eager"]) or (crashed(row["shim"]) and not crashed(row["native"]))
                print(table([row]).splitlines()[-1], flush=True)
    (out / "cts.json").write_text(json.dumps(rows, indent=2) + "\n")
    (out / "cts.md").write_text(table(rows))
    print(table(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
