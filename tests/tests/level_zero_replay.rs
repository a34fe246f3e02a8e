//! The replayer's Level Zero backend on the test-double driver, until the shim records Level Zero:
//! traces built here (the kernels of `tests/level_zero/kernels.cl` as SPIR-V, or as the driver's
//! native binary) replay in graph and eager mode with `--compare` passing; their segments form a
//! family patched in place through the mutable command list extension, or rebuilt when the driver
//! hides it or `--updates rebuild` asks; without a driver the replayer exits 3.

use end_to_end::binaries::replayer;
use end_to_end::level_zero::{program, test_kernels, TestDriver, NO_MUTABLE};
use end_to_end::replay::{parse_report, path_str};
use serde_json::Value;
use std::path::Path;
use std::process::{Command as Process, Output};
use trace_format::{
    write_trace, Api, Arg, BlobStore, Command, Copy, Device, Edge, EdgeKind, Extent, Fill, Header, HostTaskKind, ImageKind, Kernel,
    KernelId, KernelLaunch, Launch, MemId, MemKind, MemState, Memory, Node, NodeId, Param, ParamKind, Place, Program, ProgramId,
    ProgramImage, Queue, QueueId, Segment, SegmentId, Trace,
};

const N: usize = 256;
/// Device, shared and host memory; a pitched target of region copies; one sum per group of 32.
const X: MemId = MemId(0);
const Y: MemId = MemId(1);
const Z: MemId = MemId(2);
const R: MemId = MemId(3);
const S: MemId = MemId(4);
const R_PITCH: usize = 48;
const R_BYTES: usize = R_PITCH * 8;
/// Segments of the family that follows the set-up segment.
const ROUNDS: u32 = 4;

const SCALE: KernelId = KernelId(0);
const ADD_INTO: KernelId = KernelId(1);
const IOTA: KernelId = KernelId(2);
const GROUP_SUMS: KernelId = KernelId(3);

fn words(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn ints(bytes: &[u8]) -> Vec<i32> {
    bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn value(x: i32) -> Arg {
    Arg::Value(x.to_le_bytes().to_vec())
}

fn memory(mem: MemId) -> Arg {
    Arg::Memory { mem, offset: 0 }
}

fn launch(kernel: KernelId, args: Vec<Arg>, global: u64, local: Option<u64>) -> Command {
    let launch = Launch::NdRange { dims: 1, offset: [0; 3], global: [global, 1, 1], local: local.map(|l| [l, 1, 1]) };
    Command::Kernel(KernelLaunch { kernel, args, launch })
}

/// The region copy of each round: 3 rows of 32 bytes of X (as rows of 64 bytes, from byte 16 of
/// row 2) to R (rows of 48 bytes, from byte 8 of row 1).
fn region() -> Extent {
    Extent::Rect { src_origin: [16, 2, 0], dst_origin: [8, 1, 0], region: [32, 3, 1], src_row_pitch: 64, src_slice_pitch: 0, dst_row_pitch: R_PITCH as u64, dst_slice_pitch: 0 }
}

/// Builds the trace while computing, on the host, what each command does to memory.
struct Recording {
    trace: Trace,
    blobs: BlobStore,
    contents: Vec<Vec<u8>>,
}

impl Recording {
    fn new(images: Vec<ProgramImage>) -> Recording {
        let sizes = [N * 4, N * 4, N * 4, R_BYTES, N / 32 * 4];
        let kinds = [MemKind::Buffer, MemKind::Shared, MemKind::Host, MemKind::Buffer, MemKind::Buffer];
        let param = |kind, size| Param { offset: 0, size, kind };
        let kernel = |name: &str, params| Kernel { program: ProgramId(0), name: name.into(), params };
        let trace = Trace {
            header: Some(Header { api: Api::LevelZero, producer: "level zero replay test".into(), command_line: vec!["built in code".into()], process_id: 1, started_unix_s: 0 }),
            devices: vec![Device { name: "recording device".into(), vendor: "test".into(), driver_version: "1".into(), properties: Default::default() }],
            memories: kinds.iter().zip(sizes).map(|(kind, size)| Memory { kind: kind.clone(), size: size as u64, address: 0, flags: 0, device: None }).collect(),
            programs: vec![Program { images, build_options: String::new() }],
            kernels: vec![
                kernel("scale", vec![param(ParamKind::Memory, 8), param(ParamKind::Value, 4)]),
                kernel("add_into", vec![param(ParamKind::Memory, 8), param(ParamKind::Memory, 8)]),
                kernel("iota", vec![param(ParamKind::Memory, 8), param(ParamKind::Value, 4)]),
                kernel("group_sums", vec![param(ParamKind::Memory, 8), param(ParamKind::Memory, 8), param(ParamKind::Local, 8)]),
            ],
            queues: vec![
                Queue { in_order: true, device: None, flags: 0, priority: 0, label: "immediate list 0".into() },
                Queue { in_order: false, device: None, flags: 0, priority: 0, label: "immediate list 1".into() },
            ],
            ..Trace::default()
        };
        Recording { trace, blobs: BlobStore::default(), contents: sizes.iter().map(|&size| vec![0; size]).collect() }
    }

    fn states(&mut self) -> Vec<MemState> {
        self.contents.iter().enumerate().map(|(m, bytes)| MemState { mem: MemId(m as u32), blob: self.blobs.insert(bytes.clone()) }).collect()
    }

    /// Adds a segment of `commands` (queue, command, what it does), chained by `edges` (node
    /// indices within the segment).
    fn segment(&mut self, commands: Vec<(u32, Command)>, edges: &[(u32, u32, EdgeKind)]) {
        let segment = SegmentId(self.trace.segments.len() as u32);
        let first = self.trace.nodes.len() as u32;
        let initial = self.states();
        for (queue, mut command) in commands {
            // A read hands the program what the memory holds at that point.
            if let Command::Copy(Copy { src: Place::Memory { mem, .. }, dst: Place::Host { data }, .. }) = &mut command {
                *data = Some(self.blobs.insert(self.contents[mem.index()].clone()));
            }
            self.run(&command);
            self.trace.nodes.push(Node { queue: Some(QueueId(queue)), segment, command, call: "zeCommandListAppend*".into() });
        }
        self.trace.edges.extend(edges.iter().map(|&(from, to, kind)| Edge { from: NodeId(first + from), to: NodeId(first + to), kind }));
        let expected = self.states();
        self.trace.segments.push(Segment { ordinal: segment.0 as u64, ended_by: "zeCommandQueueSynchronize".into(), initial, expected, failed_with: None, printed: None, racy_reads: Vec::new(), host_writes: Vec::new() });
    }

    /// What `command` does to memory.
    fn run(&mut self, command: &Command) {
        let mem = |arg: &Arg| match arg {
            Arg::Memory { mem, .. } => mem.index(),
            other => panic!("not memory: {other:?}"),
        };
        let int = |arg: &Arg| match arg {
            Arg::Value(bytes) => ints(bytes)[0],
            other => panic!("not a value: {other:?}"),
        };
        match command {
            Command::Kernel(KernelLaunch { kernel, args, launch: Launch::NdRange { global, .. } }) => {
                let mut values: Vec<Vec<i32>> = self.contents.iter().map(|bytes| ints(bytes)).collect();
                match *kernel {
                    SCALE => values[mem(&args[0])].iter_mut().for_each(|v| *v *= int(&args[1])),
                    ADD_INTO => (0..N).for_each(|i| values[mem(&args[1])][i] += values[mem(&args[0])][i]),
                    IOTA => (0..global[0] as usize).for_each(|i| values[mem(&args[0])][i] = int(&args[1]) + i as i32),
                    _ => (0..N / 32).for_each(|g| values[mem(&args[1])][g] = values[mem(&args[0])][g * 32..(g + 1) * 32].iter().sum()),
                }
                for (m, v) in values.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
                    self.contents[m] = words(v);
                }
            }
            Command::Copy(Copy { src: Place::Host { data: Some(blob) }, dst: Place::Memory { mem, .. }, .. }) => {
                self.contents[mem.index()] = self.blobs.get(*blob).unwrap().into_owned();
            }
            Command::Copy(Copy { src: Place::Memory { mem, .. }, dst: Place::Memory { mem: to, .. }, extent }) => {
                let Extent::Rect { src_origin, dst_origin, region, src_row_pitch, dst_row_pitch, .. } = *extent else { panic!("rect copies only") };
                for row in 0..region[1] as usize {
                    let from = (src_origin[1] as usize + row) * src_row_pitch as usize + src_origin[0] as usize;
                    let into = (dst_origin[1] as usize + row) * dst_row_pitch as usize + dst_origin[0] as usize;
                    let bytes = self.contents[mem.index()][from..from + region[0] as usize].to_vec();
                    self.contents[to.index()][into..into + region[0] as usize].copy_from_slice(&bytes);
                }
            }
            Command::Fill(Fill { mem, pattern, .. }) => {
                let size = self.contents[mem.index()].len();
                self.contents[mem.index()] = pattern.iter().copied().cycle().take(size).collect();
            }
            Command::Copy(_) | Command::HostTask(_) => {}
            other => panic!("not simulated: {other:?}"),
        }
    }
}

/// A read of all of `mem` (`size` bytes) into the program; the segment fills in what it read.
fn read(mem: MemId, size: usize) -> Command {
    Command::Copy(Copy { src: Place::Memory { mem, offset: 0 }, dst: Place::Host { data: None }, extent: Extent::Linear { bytes: size as u64 } })
}

/// A set-up segment (host write, fills, a host task, a read), then `ROUNDS` segments alike but for
/// kernel arguments (memory and values) and a global size: iota into Y or Z; X scaled; then, on
/// an out-of-order queue, Y += X and group sums of X through local memory; a region copy of X
/// into R, and R read back.
fn trace_with(images: Vec<ProgramImage>) -> (Trace, BlobStore) {
    let mut recording = Recording::new(images);
    let start = recording.blobs.insert(words(&(0..N as i32).collect::<Vec<_>>()));
    let in_order = |count: u32| (1..count).map(|to| (to - 1, to, EdgeKind::InOrder)).collect::<Vec<_>>();
    recording.segment(
        vec![
            (0, Command::Copy(Copy { src: Place::Host { data: Some(start) }, dst: Place::Memory { mem: X, offset: 0 }, extent: Extent::Linear { bytes: (N * 4) as u64 } })),
            (0, Command::Fill(Fill { mem: Y, offset: 0, bytes: (N * 4) as u64, pattern: 1i32.to_le_bytes().to_vec(), rows: None })),
            (0, Command::HostTask(HostTaskKind::Callback)),
            (0, Command::Fill(Fill { mem: R, offset: 0, bytes: R_BYTES as u64, pattern: vec![0xff], rows: None })),
            (0, read(X, N * 4)),
        ],
        &in_order(5),
    );
    for round in 1..=ROUNDS as i32 {
        let target = if round % 2 == 1 { Y } else { Z };
        let commands = vec![
            (0, launch(IOTA, vec![memory(target), value(100 * round)], 32 * round as u64, Some(32))),
            (0, launch(SCALE, vec![memory(X), value(round + 2)], N as u64, Some(64))),
            (1, launch(ADD_INTO, vec![memory(X), memory(Y)], N as u64, None)),
            (1, launch(GROUP_SUMS, vec![memory(X), memory(S), Arg::Local(32 * 4)], N as u64, Some(32))),
            (0, Command::Copy(Copy { src: Place::Memory { mem: X, offset: 0 }, dst: Place::Memory { mem: R, offset: 0 }, extent: region() })),
            (0, read(R, R_BYTES)),
        ];
        let edges = [(0, 1, EdgeKind::InOrder), (1, 2, EdgeKind::Event), (1, 3, EdgeKind::Event), (1, 4, EdgeKind::InOrder), (4, 5, EdgeKind::InOrder)];
        recording.segment(commands, &edges);
    }
    (recording.trace, recording.blobs)
}

fn spirv_image(blobs: &mut BlobStore) -> ProgramImage {
    let bytes = std::fs::read(test_kernels()).expect("the SPIR-V kernels");
    ProgramImage { kind: ImageKind::SpirV, blob: blobs.insert(bytes) }
}

fn spirv_trace() -> (Trace, BlobStore) {
    let (mut trace, mut blobs) = trace_with(Vec::new());
    trace.programs[0].images.push(spirv_image(&mut blobs));
    (trace, blobs)
}

fn write(dir: &Path, name: &str, (trace, blobs): &(Trace, BlobStore)) -> std::path::PathBuf {
    let path = dir.join(name);
    write_trace(&path, trace, blobs).expect("the trace is written");
    path
}

fn run_replayer(args: &[&str], configure: impl FnOnce(&mut Process)) -> Output {
    let mut command = Process::new(replayer());
    command.args(args);
    configure(&mut command);
    command.output().expect("the replayer starts")
}

/// `replayer replay TRACE --mode MODE --compare --json EXTRA` on the test double, which must pass.
fn replay(driver: &TestDriver, trace: &Path, mode: &str, extra: &[&str], env: &[(&str, &str)]) -> Value {
    let mut args = vec!["replay", path_str(trace), "--mode", mode, "--compare", "--json", "--iterations", "2"];
    args.extend_from_slice(extra);
    let output = run_replayer(&args, |command| {
        driver.configure(command);
        command.envs(env.iter().copied());
    });
    let report = parse_report(&output, &args);
    assert!(output.status.success(), "replayer {args:?} failed: {report:#}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(report["comparison"]["passed"], Value::Bool(true), "{report:#}");
    assert!(report["device"].as_str().is_some_and(|d| d.contains("Level Zero")), "{report:#}");
    report
}

fn count(report: &Value, field: &str) -> u64 {
    report[field].as_u64().unwrap_or_else(|| panic!("no {field}: {report:#}"))
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("reprise-ze-replay-").tempdir().expect("a scratch directory")
}

#[test]
fn spirv_trace_replays_in_both_modes_with_native_updates() {
    let Some(driver) = TestDriver::get() else { return };
    let dir = scratch();
    let trace = write(dir.path(), "spirv.trace", &spirv_trace());
    let graph = replay(&driver, &trace, "graph", &[], &[]);
    // The set-up segment (split by its host task) and the family of rounds.
    assert_eq!(count(&graph, "families"), 2, "{graph:#}");
    // Every round after the base changes the family's list, in each of the four runs (warm-up,
    // two timed, compared), and the base its own back from the second run on.
    let updates = 4 * (ROUNDS as u64 - 1) + 3;
    assert_eq!((count(&graph, "native_updates"), count(&graph, "rebuilds")), (updates, 0), "{graph:#}");
    replay(&driver, &trace, "eager", &[], &[]);
}

#[test]
fn without_the_mutable_extension_lists_are_rebuilt() {
    let Some(driver) = TestDriver::get() else { return };
    let dir = scratch();
    let trace = write(dir.path(), "spirv.trace", &spirv_trace());
    let hidden = replay(&driver, &trace, "graph", &[], &[(NO_MUTABLE, "1")]);
    let asked = replay(&driver, &trace, "graph", &["--updates", "rebuild"], &[]);
    for report in [hidden, asked] {
        assert_eq!(count(&report, "native_updates"), 0, "{report:#}");
        assert!(count(&report, "rebuilds") >= ROUNDS as u64 - 1, "{report:#}");
    }
}

/// A program whose first image the driver refuses is built from the next; one given only as the
/// driver's native binary replays from it.
#[test]
fn native_binaries_and_fallback_images_replay() {
    let Some(driver) = TestDriver::get() else { return };
    let dir = scratch();
    let native_path = dir.path().join("kernels.native");
    let outcome = program("modules").run_with(|command| {
        driver.configure(command);
        command.env("REPRISE_TEST_NATIVE_OUT", &native_path);
    });
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    let native = std::fs::read(&native_path).expect("the native binary");

    let (mut trace, mut blobs) = trace_with(Vec::new());
    trace.programs[0].images = vec![ProgramImage { kind: ImageKind::DeviceBinary, blob: blobs.insert(native) }];
    let native_trace = write(dir.path(), "native.trace", &(trace, blobs));
    let (mut trace, mut blobs) = trace_with(Vec::new());
    let spirv = spirv_image(&mut blobs);
    trace.programs[0].images = vec![ProgramImage { kind: ImageKind::DeviceBinary, blob: blobs.insert(b"another driver's binary".to_vec()) }, spirv];
    let fallback_trace = write(dir.path(), "fallback.trace", &(trace, blobs));
    for trace in [native_trace, fallback_trace] {
        for mode in ["graph", "eager"] {
            replay(&driver, &trace, mode, &[], &[]);
        }
    }
}

/// A program that does not build is a clear failure, not a crash.
#[test]
fn a_module_that_does_not_build_is_reported() {
    let Some(driver) = TestDriver::get() else { return };
    let dir = scratch();
    let (mut trace, mut blobs) = trace_with(Vec::new());
    let mut bytes = std::fs::read(test_kernels()).expect("SPIR-V");
    bytes.truncate(bytes.len() / 2);
    trace.programs[0].images = vec![ProgramImage { kind: ImageKind::SpirV, blob: blobs.insert(bytes) }];
    let trace = write(dir.path(), "broken.trace", &(trace, blobs));
    let output = run_replayer(&["replay", path_str(&trace)], |command| driver.configure(command));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("program 0") && stderr.contains("SpirV image"), "{stderr}");
}

/// Whether a driver the loader finds without `ZE_ENABLE_ALT_DRIVERS` is installed.
fn system_driver_present() -> bool {
    ["libze_intel_gpu.so.1", "libze_intel_vpu.so.1"].iter().any(|name| {
        let name = std::ffi::CString::new(*name).expect("a C string");
        // SAFETY: dlopen of a constant name; the handle is closed at once.
        unsafe {
            let handle = libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL);
            if !handle.is_null() {
                libc::dlclose(handle);
            }
            !handle.is_null()
        }
    })
}

#[test]
fn without_a_driver_the_replayer_exits_3() {
    if system_driver_present() {
        eprintln!("a Level Zero driver is installed here: this test checks machines without one");
        return;
    }
    let dir = scratch();
    let trace = write(dir.path(), "spirv.trace", &spirv_trace());
    for mode in ["graph", "eager"] {
        let output = run_replayer(&["replay", path_str(&trace), "--mode", mode, "--compare"], |command| {
            command.env_remove("ZE_ENABLE_ALT_DRIVERS");
        });
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{mode}: {stderr}");
        assert!(stderr.contains("no Level Zero driver on this machine"), "{mode}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let info = run_replayer(&["info", path_str(&trace)], |command| {
        command.env_remove("ZE_ENABLE_ALT_DRIVERS");
    });
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
}
