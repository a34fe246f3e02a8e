#!/usr/bin/env python3
"""NVIDIA's cuda-samples under the shim, for scripts/gpu-check.sh --samples (see there).

  cuda_samples.py list  SAMPLES_DIR [--only PATTERNS]
  cuda_samples.py pack  SAMPLES_DIR DEST [--only PATTERNS]
  cuda_samples.py build SAMPLES_DIR WORK [--only PATTERNS] [--jobs N]
  cuda_samples.py run   SAMPLES_DIR WORK BIN_DIR OUT [--only PATTERNS] [--jobs N] [--timeout SECONDS]

Every sample of the six categories below that runs on one GPU without a display, libraries the
CUDA toolkit lacks or several GPUs is built with plain nvcc -arch=sm_90 from what its CMakeLists.txt
names (sources, CUDA libraries, separable compilation, the fatbin or PTX it loads), in parallel, into
WORK/<sample>/, next to links to the sample's own files and the shared data, which is where the
samples look for them when run from there. `run` runs each natively and under the shim (exit code
and result lines compared), replays its trace as CUDA graphs and eagerly with --compare, each step
under a timeout, several samples at once, and prints one Markdown table (also OUT/samples.md, the
rows as OUT/samples.json, logs in OUT/samples/). PATTERNS: comma-separated shell patterns matched
against CATEGORY/NAME and NAME (`3_CUDA_Features/*,simpleStreams`). `pack` copies what the checked
samples need (their directories without docs, and Common/) to DEST, a checkout of about 50 MB for a
machine that cannot fetch one.
"""

import argparse
import concurrent.futures
import fnmatch
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import replay_report

CATEGORIES = ["0_Introduction", "2_Concepts_and_Techniques", "3_CUDA_Features", "4_CUDA_Libraries", "5_Domain_Specific", "6_Performance"]

DISPLAY = "needs a display (OpenGL/GLUT)"
# Left out, each for the reason its sources give (8_Platform_Specific, 1_Utilities and 7_libNVVM are
# not among the categories checked).
EXCLUDED = {
    "simpleCUDA2GL": DISPLAY,
    "simpleTexture3D": DISPLAY,
    "EGLStream_CUDA_CrossGPU": "needs EGL and two GPUs",
    "EGLStream_CUDA_Interop": "needs EGL",
    "FunctionPointers": DISPLAY,
    "boxFilter": DISPLAY,
    "imageDenoising": DISPLAY,
    "particles": DISPLAY,
    "bindlessTexture": DISPLAY,
    "oceanFFT": DISPLAY,
    "randomFog": DISPLAY,
    "Mandelbrot": DISPLAY,
    "SobelFilter": DISPLAY,
    "bicubicTexture": DISPLAY,
    "bilateralFilter": DISPLAY,
    "fluidsGL": DISPLAY,
    "marchingCubes": DISPLAY,
    "nbody": DISPLAY,
    "postProcessGL": DISPLAY,
    "recursiveGaussian": DISPLAY,
    "simpleGL": DISPLAY,
    "smokeParticles": DISPLAY,
    "volumeFiltering": DISPLAY,
    "volumeRender": DISPLAY,
    "simpleVulkan": "needs a display (Vulkan, GLFW)",
    "simpleVulkanMMAP": "needs a display (Vulkan, GLFW)",
    "vulkanImageCUDA": "needs a display (Vulkan, GLFW)",
    "simpleD3D11": "Direct3D (Windows)",
    "simpleD3D11Texture": "Direct3D (Windows)",
    "simpleD3D12": "Direct3D (Windows)",
    "FilterBorderControlNPP": "needs the FreeImage library",
    "boxFilterNPP": "needs the FreeImage library",
    "cannyEdgeDetectorNPP": "needs the FreeImage library",
    "freeImageInteropNPP": "needs the FreeImage library",
    "histEqualizationNPP": "needs the FreeImage library",
    "simpleMPI": "needs MPI",
    "cudaNvSci": "needs NvSci (Tegra/DRIVE)",
    "simpleP2P": "needs two GPUs with peer access",
    "streamOrderedAllocationP2P": "needs two GPUs with peer access",
    "conjugateGradientMultiDeviceCG": "needs several GPUs",
    "simpleCUFFT_2d_MGPU": "needs two GPUs",
    "simpleCUFFT_MGPU": "needs two GPUs",
}

# CMake's CUDA:: targets as nvcc link flags.
LIBRARIES = {
    "cuda_driver": ["-lcuda"],
    "cudart": ["-cudart", "shared"],
    "cublas": ["-lcublas"],
    "cusparse": ["-lcusparse"],
    "cufft": ["-lcufft"],
    "cufft_static": ["-lcufft_static", "-lculibos"],
    "curand": ["-lcurand"],
    "cusolver": ["-lcusolver"],
    "nvrtc": ["-lnvrtc"],
    "nvjpeg": ["-lnvjpeg"],
}
# Other libraries the samples name, by their CMake spelling.
SYSTEM_LIBRARIES = {"dl": "-ldl", "pthread": "-lpthread", "rt": "-lrt", "culibos": "-lculibos", "${NVJITLINK_LIB}": "-lnvJitLink"}

EXIT_WAIVED = 2
# Runs of each replay: bytes that differ between any two are unstable (races, timers).
REPLAY_RUNS = 5
# Traces under this size stay with a sample's logs.
SMALL_TRACE = 2 << 20
RESULT_LINE = re.compile(r"pass|fail|result|correct|mismatch|waiv", re.IGNORECASE)


class Sample:
    def __init__(self, root, category, name):
        self.category, self.name = category, name
        self.key = f"{category}/{name}"
        self.dir = os.path.join(root, "Samples", category, name)
        self.common = os.path.join(root, "Common")
        self.cmake = open(os.path.join(self.dir, "CMakeLists.txt")).read()

    def excluded(self):
        return EXCLUDED.get(self.name)

    def sources(self):
        found = re.search(r"add_executable\(\s*" + re.escape(self.name) + r"\s+([^)]*)\)", self.cmake)
        if not found:
            return []
        paths = []
        for word in found.group(1).split():
            path = os.path.normpath(os.path.join(self.dir, word))
            if not os.path.exists(path):
                path = os.path.join(self.common, os.path.basename(word))
            paths.append(path)
        return paths

    def flags(self):
        flags = ["-arch=sm_90", "-O2", "-std=c++17", "-Wno-deprecated-gpu-targets", "-I" + self.common, "-I" + self.dir]
        if os.path.isdir(os.path.join(self.dir, "inc")):
            flags.append("-I" + os.path.join(self.dir, "inc"))
        if "CUDA_SEPARABLE_COMPILATION ON" in self.cmake:
            flags.append("-rdc=true")
        if "--extended-lambda" in self.cmake:
            flags.append("--extended-lambda")
        if "OpenMP" in self.cmake:
            flags += ["-Xcompiler", "-fopenmp"]
        for library in sorted(set(re.findall(r"CUDA::(\w+)", self.cmake))):
            flags += LIBRARIES.get(library, ["-l" + library])
        for linked in re.findall(r"target_link_libraries\((.*?)\)", self.cmake, re.S):
            flags += [SYSTEM_LIBRARIES[word] for word in linked.split() if word in SYSTEM_LIBRARIES]
        return list(dict.fromkeys(flags))

    def kernel_images(self):
        """The fatbin or PTX file the sample loads at run time: (kind, output name, source)."""
        images = []
        for kind in ("FATBIN", "PTX"):
            output = re.search(r'set\(CUDA_%s_FILE "\$\{CMAKE_CURRENT_BINARY_DIR\}/([^"]+)"\)' % kind, self.cmake)
            source = re.search(r'set\(CUDA_KERNEL_SOURCE "\$\{CMAKE_CURRENT_SOURCE_DIR\}/([^"]+)"\)', self.cmake)
            if output and source:
                images.append(("-" + kind.lower(), output.group(1), os.path.join(self.dir, source.group(1))))
        return images

    def uses_nvrtc(self):
        return "CUDA::nvrtc" in self.cmake


def samples(root, only):
    patterns = [pattern for pattern in (only or "").split(",") if pattern]
    found = []
    for category in CATEGORIES:
        base = os.path.join(root, "Samples", category)
        for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if not os.path.isfile(os.path.join(base, name, "CMakeLists.txt")):
                continue
            sample = Sample(root, category, name)
            if not patterns or any(fnmatch.fnmatch(sample.key, p) or fnmatch.fnmatch(name, p) for p in patterns):
                found.append(sample)
    return found


def tail(path, lines=40):
    try:
        with open(path, errors="replace") as file:
            return file.read().splitlines()[-lines:]
    except OSError:
        return []


def telling_line(path, default=""):
    """The first line of a log that names an error, else its first line."""
    lines = [line.strip() for line in tail(path, 2000) if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [default])[0][:160]


# ---- build ------------------------------------------------------------------------------------

def cuda_include(nvcc):
    return os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(shutil.which(nvcc) or nvcc))), "include")


def link_files(sample, place, nvcc):
    """The run directory: links to the sample's files and the shared data (where the samples
    look for their inputs), and for NVRTC samples the cooperative groups headers they include."""
    os.makedirs(place, exist_ok=True)
    data = os.path.join(sample.common, "data")
    entries = [os.path.join(sample.dir, entry) for entry in os.listdir(sample.dir)]
    entries += [os.path.join(data, entry) for entry in os.listdir(data)] if os.path.isdir(data) else []
    if sample.uses_nvrtc():
        include = cuda_include(nvcc)
        entries += [os.path.join(include, entry) for entry in ("cooperative_groups.h", "cooperative_groups")]
    for entry in entries:
        link = os.path.join(place, os.path.basename(entry))
        if os.path.exists(entry) and not os.path.lexists(link):
            os.symlink(entry, link)


def build_one(sample, work, nvcc):
    place = os.path.join(work, sample.name)
    log = os.path.join(place, "build.log")
    link_files(sample, place, nvcc)
    commands = [[nvcc, *sample.flags(), "-o", os.path.join(place, sample.name), *sample.sources()]]
    commands += [[nvcc, "-arch=sm_90", "-I" + sample.common, kind, "-o", os.path.join(place, output), source] for kind, output, source in sample.kernel_images()]
    with open(log, "w") as out:
        for command in commands:
            out.write(" ".join(command) + "\n")
            out.flush()
            if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                return sample, False
    return sample, True


def build(args):
    work = os.path.abspath(args.work)
    chosen = [sample for sample in samples(args.samples, args.only) if not sample.excluded()]
    started = time.time()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for sample, built in pool.map(lambda sample: build_one(sample, work, args.nvcc), chosen):
            if not built:
                failed.append(sample.name)
                print(f"build failed: {sample.key}: {telling_line(os.path.join(work, sample.name, 'build.log'))}", file=sys.stderr)
    print(f"built {len(chosen) - len(failed)} of {len(chosen)} samples in {time.time() - started:.0f} s into {work}")
    return 0


# ---- run --------------------------------------------------------------------------------------

def run_step(command, cwd, log, timeout, env=None):
    """Runs `command` with its output in `log` (.out, .err); its exit code, or None on timeout."""
    with open(log + ".out", "w") as out, open(log + ".err", "w") as err:
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, env=env, start_new_session=True)
        try:
            return process.wait(timeout=timeout), process.pid
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return None, process.pid


def trim_logs(log, keep=200):
    """Keeps the last `keep` lines of each of a sample's logs (some print a line per thread)."""
    directory, name = os.path.split(log)
    for entry in os.listdir(directory):
        path = os.path.join(directory, entry)
        if entry.startswith(name + ".") and not entry.endswith((".json", ".trace")) and os.path.getsize(path) > 64 * 1024:
            lines = tail(path, keep)
            with open(path, "w") as file:
                file.write("\n".join(["[earlier lines cut]"] + lines) + "\n")


def result_lines(path):
    return [line for line in tail(path, 100000) if RESULT_LINE.search(line)]


def same_results(binary, place, log, timeout):
    """Whether the shim's run printed the native run's result lines. Where they differ, the program
    runs natively once more: a line that differs between two native runs (a result seeded with the
    time) is the program's own nondeterminism, not held against the shim."""
    native, shim = result_lines(log + ".native.out"), result_lines(log + ".shim.out")
    if native == shim:
        return True
    run_step([binary], place, log + ".native2", timeout)
    again = result_lines(log + ".native2.out")
    if len(again) != len(native) or len(shim) != len(native):
        return False
    return all(ours == theirs for ours, theirs, other in zip(shim, native, again) if theirs == other)


def partial_reasons(bin_dir, trace):
    """Why the shim marked `trace` partial (what it could not record), from `replayer info --json`."""
    info = subprocess.run([os.path.join(bin_dir, "replayer"), "info", trace, "--json"], capture_output=True, text=True)
    try:
        return [f"{p['call']}: {p['reason']}" for p in json.loads(info.stdout).get("partial", [])]
    except ValueError:
        return []


def replay_verdict(code, report, err):
    """What a replay's JSON report says: a pass (with the bytes that differed between two replays,
    which are unstable, not failed), or what differed first."""
    if code is None:
        return "timeout", ""
    try:
        comparison = replay_report.read(report)["comparison"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"exit {code}", telling_line(err)
    if comparison["compared"] == 0:
        return "nothing compared", ""
    if code == 0 and comparison["passed"]:
        kinds = [("unstable_bytes", "unstable"), ("reordered_bytes", "reordered"), ("address_bytes", "addresses")]
        counted = [f"{comparison[key]} {name} bytes" for key, name in kinds if comparison.get(key)]
        return ("pass" if not counted else f"pass ({', '.join(counted)})"), ""
    mismatches = comparison["mismatches"]
    if not mismatches:
        return f"exit {code}", telling_line(err)
    first = mismatches[0]
    subject = f"memory {first['mem']}" if "mem" in first else "what the device printed" if first.get("printed") else f"data received by node {first.get('node')}"
    words = f" (word {first.get('expected_word')} recorded, {first.get('actual_word')} replayed)" if first.get("expected_word") else ""
    return f"fail ({len(mismatches)} of {comparison['compared']} differ)", f"{subject} of segment {first['segment']} first differs at byte {first['first_offset']}{words}"


def run_one(sample, work, bin_dir, logs, timeout):
    row = check_one(sample, work, bin_dir, logs, timeout)
    trim_logs(os.path.join(logs, sample.name))
    return row


def check_one(sample, work, bin_dir, logs, timeout):
    row = {"sample": sample.key, "native": "", "shim": "", "graph": "", "eager": "", "reason": ""}
    place = os.path.join(work, sample.name)
    binary = os.path.join(place, sample.name)
    log = os.path.join(logs, sample.name)
    if not os.access(binary, os.X_OK):
        row["native"], row["reason"] = "not built", telling_line(os.path.join(place, "build.log"), "run the build step first")
        return row
    native, _ = run_step([binary], place, log + ".native", timeout)
    if native == EXIT_WAIVED:
        row["native"], row["reason"] = "waived", "the sample waives itself on this machine: " + telling_line(log + ".native.out")
        return row
    row["native"] = "timeout" if native is None else "ok" if native == 0 else f"exit {native}"
    if native != 0:
        row["reason"] = "native: " + telling_line(log + ".native.err", telling_line(log + ".native.out"))
    for old in os.listdir(place):
        if old.startswith("shim-") and old.endswith(".trace"):
            os.remove(os.path.join(place, old))
    env = dict(os.environ, LD_PRELOAD=os.path.join(bin_dir, "libshim.so"), REPRISE_OUTPUT=os.path.join(place, "shim-%p.trace"))
    shim, pid = run_step([binary], place, log + ".shim", timeout, env)
    same_output = shim == native and same_results(binary, place, log, timeout)
    row["shim"] = "timeout" if shim is None else "same" if same_output else f"exit {shim}" if shim != native else "result lines differ"
    if shim is not None and shim != native and not row["reason"]:
        row["reason"] = "shim: " + telling_line(log + ".shim.err", telling_line(log + ".shim.out"))
    # The program's own trace first, then those of the processes it started (IPC samples).
    parent = os.path.join(place, f"shim-{pid}.trace")
    traces = sorted(glob.glob(os.path.join(place, "shim-*.trace")), key=lambda path: path != parent)
    if not os.path.exists(parent):
        row["graph"] = row["eager"] = "no trace"
        return row
    verdicts = {"graph": [], "eager": []}
    for index, trace in enumerate(traces):
        name = log if index == 0 else f"{log}.child{index}"
        partial = partial_reasons(bin_dir, trace)
        for mode in verdicts:
            report = name + f".{mode}.json"
            command = [os.path.join(bin_dir, "replayer"), "replay", trace, "--mode", mode, "--iterations", str(REPLAY_RUNS - 1), "--compare", "--json",
                       *shlex.split(os.environ.get("REPLAYER_ARGS", ""))]
            code, _ = run_step(command, place, name + f".{mode}", timeout)
            if code is not None:
                shutil.copyfile(name + f".{mode}.out", report)
            verdict, why = replay_verdict(code, report, name + f".{mode}.err")
            verdicts[mode].append(verdict)
            if why and not row["reason"]:
                whose = "" if index == 0 else f"child process {index}: "
                row["reason"] = f"{whose}{mode}: {why}" + (f" (trace partial: {partial[0]})" if partial else "")
        # A small trace stays with the logs, to be read where the replayer has no GPU (info, validate, dot).
        if os.path.getsize(trace) < SMALL_TRACE:
            shutil.move(trace, name + ".trace")
        else:
            os.remove(trace)
    for mode, found in verdicts.items():
        row[mode] = combined_verdict(found)
    return row


def combined_verdict(verdicts):
    """One verdict for the traces of a program's processes: the first that did not pass, else a
    pass if any trace compared something."""
    failed = [verdict for verdict in verdicts if not verdict.startswith(("pass", "nothing compared"))]
    if failed:
        return failed[0]
    passed = [verdict for verdict in verdicts if verdict.startswith("pass")]
    return passed[0] if passed else "nothing compared"


def run(args):
    work, out = os.path.abspath(args.work), os.path.abspath(args.out)
    bin_dir = os.path.abspath(args.bin)
    logs = os.path.join(out, "samples")
    os.makedirs(logs, exist_ok=True)
    chosen = samples(args.samples, args.only)
    rows = [{"sample": s.key, "native": "excluded", "shim": "", "graph": "", "eager": "", "reason": s.excluded()} for s in chosen if s.excluded()]
    checked = [s for s in chosen if not s.excluded()]
    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows += list(pool.map(lambda sample: run_one(sample, work, bin_dir, logs, args.timeout), checked))
    rows.sort(key=lambda row: row["sample"])
    passing = [row for row in rows if row["shim"] == "same" and row["graph"].startswith("pass") and row["eager"].startswith("pass")]
    # A sample that fails natively does not run here (matrixMul_nvrtc on CUDA 13): listed, not counted.
    ran = [row for row in rows if row["native"] in ("ok", "timeout")]
    table = ["| sample | native | shim | graph | eager | reason |", "| --- | --- | --- | --- | --- | --- |"]
    table += ["| {sample} | {native} | {shim} | {graph} | {eager} | {reason} |".format(**{k: str(v).replace("|", "/") for k, v in row.items()}) for row in rows]
    table.append("")
    table.append(f"{len(passing)} of {len(ran)} samples run pass (same exit code and result lines under the shim, graph and eager replay "
                 f"--compare pass, bytes that differ between its {REPLAY_RUNS} runs being unstable); {len(rows) - len(ran)} excluded, waived, "
                 f"not built or failing natively; {time.time() - started:.0f} s")
    text = "\n".join(table) + "\n"
    open(os.path.join(out, "samples.md"), "w").write(text)
    json.dump(rows, open(os.path.join(out, "samples.json"), "w"), indent=1)
    print(text, end="")
    return 0 if len(passing) == len(ran) else 1


def pack(args):
    chosen = [sample for sample in samples(args.samples, args.only) if not sample.excluded()]
    ignore = shutil.ignore_patterns("doc", ".vscode")
    for sample in chosen:
        shutil.copytree(sample.dir, os.path.join(args.dest, "Samples", sample.category, sample.name), ignore=ignore, dirs_exist_ok=True)
    shutil.copytree(os.path.join(args.samples, "Common"), os.path.join(args.dest, "Common"), dirs_exist_ok=True)
    print(f"copied {len(chosen)} samples and Common/ to {args.dest}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list")
    listing.add_argument("samples")
    packer = commands.add_parser("pack")
    packer.add_argument("samples")
    packer.add_argument("dest")
    builder = commands.add_parser("build")
    builder.add_argument("samples")
    builder.add_argument("work")
    builder.add_argument("--nvcc", default="nvcc")
    runner = commands.add_parser("run")
    runner.add_argument("samples")
    runner.add_argument("work")
    runner.add_argument("bin")
    runner.add_argument("out")
    runner.add_argument("--timeout", type=float, default=60)
    for command in (listing, packer, builder, runner):
        command.add_argument("--only", default="")
        command.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    args = parser.parse_args()
    args.samples = os.path.abspath(args.samples)
    if not os.path.isdir(os.path.join(args.samples, "Samples")) or not os.path.isdir(os.path.join(args.samples, "Common")):
        print(f"cuda_samples: {args.samples} is not a cuda-samples checkout (no Samples/ and Common/)", file=sys.stderr)
        return 2
    if args.command == "list":
        for sample in samples(args.samples, args.only):
            print(f"{sample.key}: excluded, {sample.excluded()}" if sample.excluded() else f"{sample.key}: {' '.join(sample.flags()[6:])}")
        return 0
    return {"pack": pack, "build": build, "run": run}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
