#!/usr/bin/env python3
"""Regression runner: records and replays a set of programs and says what changed.

For each program of a manifest (default tests/opencl/manifest.json): run it natively and under the
shim (same output?), replay its trace in graph and eager mode with --compare, time all four, and,
against a baseline (an earlier run's --out directory), compare output and `replayer diff` the traces
so that a changed kernel is located down to the memory it changed. With --traces DIR it only
re-checks saved traces (after a driver upgrade, say), without running the programs. With --rounds N
the table's replay times come from one more replay per trace, `--mode both --rounds N`, which
alternates the modes so that the machine's drift falls on both alike (the checking replays run one
after the other, and programs whose iterations spread by 10-30% moved eager/graph by as much).

Writes OUT/report.json, OUT/report.md and OUT/traces/NAME.trace; exits 1 when anything regressed,
2 on bad input. Python standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import replay_report

ROOT = Path(__file__).resolve().parent.parent
PROCESS_TIMEOUT_S = 300
# Short names for the platforms' names (PoCL calls itself "Portable Computing Language").
DEVICE_ALIASES = {"pocl": "portable"}


class BadInput(Exception):
    """A problem with the manifest, a path or the build: exit 2, not a regression."""


def main():
    args = parse_args()
    args.device = DEVICE_ALIASES.get((args.device or "").lower(), args.device)
    out = Path(args.out).resolve()  # the programs run in their build directory
    try:
        (out / "traces").mkdir(parents=True, exist_ok=True)
        environment = device_environment(args.device, out)
        tools = Tools(args.target_dir, environment, args.device, args.iterations, args.rounds)
        if args.traces:
            results = [recheck_trace(tools, trace) for trace in sorted(Path(args.traces).glob("*.trace"))]
            if not results:
                raise BadInput(f"no *.trace files in {args.traces}")
        else:
            baseline = load_baseline(args.baseline)
            programs = load_manifest(Path(args.manifest))
            with tempfile.TemporaryDirectory(prefix="reprise-regress-") as build_dir:
                results = [run_program(tools, program, Path(build_dir), out, baseline) for program in programs]
    except (BadInput, OSError) as error:
        print(f"regress.py: {error}", file=sys.stderr)
        return 2
    report = {"device": args.device or "first", "mode": "traces" if args.traces else "programs", "results": results}
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(markdown(report))
    regressed = [result["name"] for result in results if result["regressions"]]
    print(f"{len(results)} checked, {len(regressed)} regressed{': ' + ', '.join(regressed) if regressed else ''}")
    print(f"report: {out / 'report.md'}")
    return 1 if regressed else 0


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", default=str(ROOT / "tests/opencl/manifest.json"))
    parser.add_argument("--out", default=str(ROOT / "target/regress"), help="report and trace directory")
    parser.add_argument("--baseline", help="an earlier run's --out directory to compare outputs and traces with")
    parser.add_argument("--traces", help="re-check the traces in this directory instead of running programs")
    parser.add_argument("--device", help="platform/device name fragment, e.g. pocl or intel "
                        "(intel uses $REPRISE_INTEL_OCL, the path of libintelocl.so)")
    parser.add_argument("--iterations", type=int, default=10, help="timed replay iterations")
    parser.add_argument("--rounds", type=int, help="time the modes side by side, alternating this many times")
    default_target = os.environ.get("REPRISE_TARGET_DIR", str(ROOT / "target/debug"))
    parser.add_argument("--target-dir", default=default_target, help="where libshim.so and replayer are")
    return parser.parse_args()


def device_environment(device, out):
    """The environment the programs and the replayer run in: the device's ICD and its selection."""
    environment = dict(os.environ)
    if not device:
        return environment
    environment["REPRISE_TEST_PLATFORM"] = device
    if device.lower() == "intel":
        library = os.environ.get("REPRISE_INTEL_OCL")
        if not library or not Path(library).is_file():
            raise BadInput("--device intel needs REPRISE_INTEL_OCL, the path of libintelocl.so")
        # The system loader reads OCL_ICD_FILENAMES; pyopencl's bundled one only OCL_ICD_VENDORS.
        vendors = out / "intel-icd"
        vendors.mkdir(exist_ok=True)
        (vendors / "intel.icd").write_text(library + "\n")
        environment["OCL_ICD_FILENAMES"] = library
        environment["OCL_ICD_VENDORS"] = str(vendors)
        paths = [str(Path(library).parent)] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
        environment["LD_LIBRARY_PATH"] = ":".join(paths)
    return environment


class Tools:
    """The shim and the replayer, run in the chosen device's environment."""

    def __init__(self, target_dir, environment, device, iterations, rounds):
        # Absolute: the programs run in their build directory.
        self.shim = Path(target_dir).resolve() / "libshim.so"
        self.replayer = Path(target_dir).resolve() / "replayer"
        for path in (self.shim, self.replayer):
            if not path.is_file():
                raise BadInput(f"{path} is missing: run `cargo build -p shim -p replayer` (or give --target-dir)")
        self.environment = environment
        self.device = device
        self.iterations = iterations
        self.rounds = rounds

    def run(self, argv, extra_environment=None, cwd=None):
        """(exit code or None on timeout, stdout, stderr, seconds)."""
        environment = dict(self.environment, **(extra_environment or {}))
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, env=environment, cwd=cwd, capture_output=True, text=True,
                                  timeout=PROCESS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return None, "", f"timed out after {PROCESS_TIMEOUT_S} s", time.perf_counter() - start
        return done.returncode, done.stdout, done.stderr, time.perf_counter() - start

    def replay_report(self, trace, *options):
        """`replayer replay TRACE OPTIONS --json --iterations N` on the chosen device: its exit code,
        JSON report (None without one) and standard error."""
        argv = [str(self.replayer), "replay", str(trace), *options, "--json", "--iterations", str(self.iterations)]
        if self.device:
            argv += ["--device", self.device]
        code, stdout, stderr, _ = self.run(argv)
        try:
            return code, replay_report.last_json_document(stdout), stderr
        except ValueError:
            return code, None, stderr

    def replay(self, trace, mode):
        """`replayer replay --compare --json` in `mode`: a result and its regression, if any."""
        code, report, stderr = self.replay_report(trace, "--mode", mode, "--compare")
        if report is None:
            return {"exit": code, "error": stderr.strip()}, f"{mode} replay failed (exit {code}): {stderr.strip()}"
        comparison = report.get("comparison") or {}
        # Comparing nothing is no pass: the program's results were not kept.
        passed = comparison.get("passed") is True and (comparison.get("compared") or 0) > 0
        result = {"exit": code, "passed": passed, "compared": comparison.get("compared"),
                  "median_us": (report.get("time_per_iteration_us") or {}).get("median"),
                  "families": report.get("families"), "native_updates": report.get("native_updates"),
                  "rebuilds": report.get("rebuilds")}
        if code == 0 and comparison.get("passed") is True and not passed:
            return result, f"{mode} replay compared nothing"
        if code != 0 or not passed:
            located = "; ".join(describe_mismatch(m) for m in comparison.get("mismatches", []))
            return result, f"{mode} replay differs from the recording (exit {code}){': ' + located if located else ''}"
        return result, None

    def replay_side_by_side(self, trace):
        """Median µs per iteration of each mode from `--mode both --rounds`, or None if it failed."""
        code, report, _ = self.replay_report(trace, "--mode", "both", "--rounds", str(self.rounds))
        if report is None:
            return None
        medians = {mode: ((report.get(mode) or {}).get("time_per_iteration_us") or {}).get("median") for mode in ("graph", "eager")}
        return medians if code == 0 and None not in medians.values() else None

    def diff(self, baseline_trace, trace):
        """`replayer diff --json`: the differences, or an error string."""
        code, stdout, stderr, _ = self.run([str(self.replayer), "diff", "--json", str(baseline_trace), str(trace)])
        try:
            return json.loads(stdout)
        except json.JSONDecodeError:
            return {"error": f"replayer diff failed (exit {code}): {stderr.strip()}"}


def without_timings(output):
    """A program's output less its own timing lines (`time: ...`), the only ones that may vary."""
    return "".join(line for line in output.splitlines(keepends=True) if not line.startswith("time:"))


def describe_mismatch(mismatch):
    return (f"segment {mismatch.get('segment')} memory {mismatch.get('mem')}: "
            f"{mismatch.get('differing_bytes')} bytes differ from offset {mismatch.get('first_offset')}")


def load_manifest(path):
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise BadInput(f"cannot read the manifest {path}: {error}")
    programs = manifest.get("programs") if isinstance(manifest, dict) else None
    if not isinstance(programs, list) or not programs:
        raise BadInput(f"{path}: expected {{\"programs\": [...]}} with at least one program")
    for program in programs:
        if not isinstance(program, dict) or "name" not in program or ("c" in program) == ("command" in program):
            raise BadInput(f"{path}: each program needs a name and exactly one of \"c\" or \"command\": {program}")
        program["base"] = path.parent
    return programs


def load_baseline(directory):
    if directory is None:
        return None
    report = Path(directory) / "report.json"
    try:
        results = json.loads(report.read_text())["results"]
    except (OSError, json.JSONDecodeError, KeyError) as error:
        raise BadInput(f"cannot read the baseline report {report}: {error}")
    return {result["name"]: (result, Path(directory) / "traces" / f"{result['name']}.trace") for result in results}


def program_argv(program, build_dir):
    """Builds a C program (cc, -lOpenCL unless it dlopens the loader) or expands a command line."""
    base = program["base"]
    if "command" in program:
        python = os.environ.get("REPRISE_PYTHON") or "python3"
        return [python if word == "{python}" else resolve(base, word) for word in program["command"]]
    executable = build_dir / program["name"]
    libraries = (["-lOpenCL"] if program.get("link_loader", True) else []) + ["-ldl", "-lm"]
    defines = [f"-D{define}" for define in program.get("defines", [])]
    argv = ["cc", "-O1", "-D_GNU_SOURCE", *defines, "-o", str(executable), str(base / program["c"]), *libraries]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise BadInput(f"building {program['name']} failed:\n{done.stderr}")
    return [str(executable)]


def resolve(base, word):
    """A command-line word that names a file beside the manifest becomes its path."""
    candidate = base / word
    return str(candidate) if candidate.exists() else word


def run_program(tools, program, build_dir, out, baseline):
    name = program["name"]
    print(f"== {name}", flush=True)
    argv = program_argv(program, build_dir)
    trace = out / "traces" / f"{name}.trace"
    trace.unlink(missing_ok=True)
    regressions = []
    native_code, native_out, native_err, native_s = tools.run(argv, cwd=build_dir)
    if native_code != 0:
        regressions.append(f"fails natively (exit {native_code}): {native_err.strip()}")
    shim = {"LD_PRELOAD": str(tools.shim), "REPRISE_OUTPUT": str(trace)}
    shim_code, shim_out, _, shim_s = tools.run(argv, shim, cwd=build_dir)
    same = (shim_code, without_timings(shim_out)) == (native_code, without_timings(native_out))
    if not same:
        regressions.append(f"behaves differently under the shim (exit {native_code} -> {shim_code})")
    result = {"name": name, "command": argv, "exit": native_code, "stdout": native_out,
              "native_s": native_s, "recorded_s": shim_s, "same_under_shim": same}
    if trace.is_file():
        replay_trace(tools, trace, result, regressions)
    else:
        regressions.append("left no trace")
    if baseline is not None:
        compare_with_baseline(tools, baseline.get(name), result, trace, regressions)
    result["regressions"] = regressions
    return result


def replay_trace(tools, trace, result, regressions):
    for mode in ("graph", "eager"):
        result[mode], regression = tools.replay(trace, mode)
        if regression:
            regressions.append(regression)
    if tools.rounds and not regressions:
        result["side_by_side_us"] = tools.replay_side_by_side(trace)


def recheck_trace(tools, trace):
    print(f"== {trace.name}", flush=True)
    result = {"name": trace.stem, "trace": str(trace)}
    regressions = []
    replay_trace(tools, trace, result, regressions)
    result["regressions"] = regressions
    return result


def compare_with_baseline(tools, entry, result, trace, regressions):
    """Output and recorded work against the baseline's: a changed result is a regression, located."""
    if entry is None:
        result["baseline"] = "none for this program"
        return
    baseline_result, baseline_trace = entry
    if baseline_result.get("stdout") != result["stdout"]:
        regressions.append("output differs from the baseline")
    if not (baseline_trace.is_file() and trace.is_file()):
        return
    difference = tools.diff(baseline_trace, trace)
    result["baseline_diff"] = difference
    if "error" in difference:
        regressions.append(difference["error"])
    for memory in difference.get("memory_differs", []):
        regressions.append(f"final memory differs from the baseline: segment {memory['segment']} memory "
                           f"{memory['mem']}, {memory['differing_bytes']} bytes from offset {memory['first_offset']}")
    for kernel in difference.get("kernels_changed", []):
        result.setdefault("notes", []).append(f"kernel {kernel['kernel']}: {kernel['change']}")


def markdown(report):
    timing = "side by side" if any(result.get("side_by_side_us") for result in report["results"]) else "from the checking replays"
    lines = [f"# Regression report ({report['mode']}, device: {report['device']}; replay times {timing})", "",
             "| program | native s | recorded s | under shim | graph µs | eager µs | eager/graph | status |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- |"]
    for result in report["results"]:
        timed = result.get("side_by_side_us") or {}
        graph = timed.get("graph", (result.get("graph") or {}).get("median_us"))
        eager = timed.get("eager", (result.get("eager") or {}).get("median_us"))
        ratio = f"{eager / graph:.2f}" if graph and eager else "-"
        shim = {True: "same", False: "DIFFERENT", None: "-"}[result.get("same_under_shim")]
        status = "REGRESSED" if result["regressions"] else "ok"
        times = [number(result.get("native_s"), 2), number(result.get("recorded_s"), 2)]
        lines.append(f"| {result['name']} | {times[0]} | {times[1]} | {shim} | {number(graph, 1)} | "
                     f"{number(eager, 1)} | {ratio} | {status} |")
    details = [(result["name"], text) for result in report["results"] for text in result["regressions"]]
    details += [(result["name"], text) for result in report["results"] for text in result.get("notes", [])]
    if details:
        lines += ["", "## Details", ""] + [f"- {name}: {text}" for name, text in details]
    return "\n".join(lines) + "\n"


def number(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"


if __name__ == "__main__":
    sys.exit(main())
