//! `replayer replay`: check every input first, then run, report, and write what was asked.

use super::failure::{Exit, Failure};
use super::inspect::print_json;
use super::load::{open, refuse_problems, unreadable};
use super::progress::Progress;
use clap::{Args, ValueEnum};
use replayer::backend::{BackendOptions, HostCopies};
use replayer::backends;
use replayer::overrides::{ArgOverride, OverrideCheck, Overrides, SizeOverride};
use replayer::profile::chrome_trace;
use replayer::validate::Validator;
use replayer::replay::{memory_elements, Element, Mode, ReplayError, Replayer, Rule, RunOptions, RunReport, Tolerance};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use trace_format::{MemId, MemKind, Trace, TraceReader};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Graph,
    Eager,
    /// Graph, then eager, with the ratio of their times.
    Both,
}

/// `MEM=FILE`: a memory object and a file of its contents.
#[derive(Clone, Debug)]
pub struct MemFile {
    mem: MemId,
    path: PathBuf,
}

impl FromStr for MemFile {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (mem, path) = text.split_once('=').ok_or("expected MEM=FILE, for example `3=input.bin`")?;
        let mem = mem.parse().map_err(|_| format!("memory id `{mem}` is not a number"))?;
        if path.is_empty() {
            return Err("the file name is missing; expected MEM=FILE".to_string());
        }
        Ok(MemFile { mem: MemId(mem), path: PathBuf::from(path) })
    }
}

#[derive(Args)]
pub struct ReplayArgs {
    trace: PathBuf,
    #[arg(long, value_enum, default_value_t = ModeArg::Graph)]
    mode: ModeArg,
    /// Timed iterations (a warm-up iteration runs first, and with `--compare` or `--profile` an
    /// untimed one last; neither is counted).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    iterations: u32,
    /// With `--mode both`: alternate graph and eager runs this many times and pool each mode's
    /// times, so that the machine's drift in speed falls on both modes alike (comparisons are
    /// made in the first round).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Compare what the program's segments left (expected memory, data received on the host)
    /// with the recording after every run; bytes that differ between runs are unstable and
    /// only counted (exit 1 when stable bytes differ). Unordered nodes that use the same
    /// memory, one writing it, are reported as hazards.
    #[arg(long)]
    compare: bool,
    /// Compare floating-point memory within a tolerance: any of abs=A, rel=R, ulps=N, e.g.
    /// `rel=1e-5,ulps=4`. The element type of memory is what the kernels' parameter types say
    /// (`float*`; the trace keeps them where the API said them), else --element; memory of no
    /// known element type stays byte for byte.
    #[arg(long, value_name = "abs=A,rel=R,ulps=N", value_parser = Tolerance::parse)]
    tolerance: Option<Tolerance>,
    /// The element type of all memory compared within --tolerance, whatever the trace says.
    #[arg(long, value_enum, requires = "tolerance")]
    element: Option<Element>,
    /// Machine-readable report.
    #[arg(long)]
    json: bool,
    /// Device index, as `replayer devices` lists the trace's API, or a fragment of its platform
    /// name (matched first) or device name; by default the device the trace was recorded on when
    /// this machine has it, else the first.
    #[arg(long)]
    device: Option<String>,
    /// Place memory at the addresses it had when recorded.
    #[arg(long)]
    exact_addresses: bool,
    /// How graph mode applies patches between segments: the device's native update where it has
    /// one, or a rebuild of the command buffer (to measure what native updates save).
    #[arg(long, value_enum, default_value = "native")]
    updates: Updates,
    /// How CUDA graphs replay copies to and from host memory: on the stream between graphs, as
    /// memcpy nodes inside them, or as kernel nodes on pinned memory (linear copies up to 256 KB;
    /// larger ones on the stream).
    #[arg(long, value_enum, default_value = "kernels")]
    host_copies: HostCopies,
    /// The most bytes of memory objects to hold at once (OpenCL; default: half the device's
    /// memory). A trace whose objects add up to more has those in use at different times share
    /// storage; the final contents of the earlier ones are then gone.
    #[arg(long, value_name = "BYTES")]
    memory_budget: Option<u64>,
    /// Set a kernel argument of a node, or of every launch of a kernel (types f32, f64, i32, u32, i64, u64, mem:MEMID[+OFFSET]).
    #[arg(long = "set", value_name = "NODE_OR_KERNEL:INDEX=TYPE:VALUE")]
    set: Vec<ArgOverride>,
    /// Replace the global size (ND-range) or grid of a node, or of every launch of a kernel.
    #[arg(long = "global", value_name = "NODE_OR_KERNEL=X[,Y[,Z]]")]
    global: Vec<SizeOverride>,
    /// Start a memory object from a file's contents instead of the recorded ones.
    #[arg(long, value_name = "MEM=FILE")]
    input: Vec<MemFile>,
    /// Write a memory object's final contents to a file.
    #[arg(long, value_name = "MEM=FILE")]
    output: Vec<MemFile>,
    /// Write the final contents of every memory object (but stream-ordered ones) to DIR/mem<ID>.bin.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
    /// Write per-node device times of the last iteration in Chrome trace format (Perfetto).
    #[arg(long, value_name = "FILE.json")]
    profile: Option<PathBuf>,
}

pub fn replay(args: &ReplayArgs) -> Result<ExitCode, Failure> {
    super::layout::map_from_below();
    let reader = open(&args.trace)?;
    let overrides = check(&reader, args)?;
    let trace = reader.objects();
    let inputs = read_inputs(trace, &args.input)?;
    for output in &args.output {
        memory_exists(trace, output.mem, "--output")?;
    }
    let api = trace.header.as_ref().map(|h| h.api).ok_or_else(|| Failure::bad_input("the trace has no header"))?;
    let options = BackendOptions {
        device: args.device.clone(),
        recorded: backends::recorded_device(trace).cloned(),
        exact_addresses: args.exact_addresses,
        profile: args.profile.is_some(),
        rebuild_updates: args.updates == Updates::Rebuild,
        memory_budget: args.memory_budget,
        host_copies: args.host_copies,
    };
    let backend = backends::open(api, &options)?;
    if let Some(note) = backend.device_note() {
        eprintln!("replayer: note: {note}");
    }
    let mut replayer = Replayer::new(backend, &reader, overrides)?;
    let (modes, rounds): (&[Mode], u32) = match args.mode {
        ModeArg::Graph => (&[Mode::Graph], 1),
        ModeArg::Eager => (&[Mode::Eager], 1),
        ModeArg::Both => (&[Mode::Graph, Mode::Eager], args.rounds),
    };
    let rules = rules(&reader, args)?;
    let mut reports: Vec<RunReport> = Vec::new();
    for round in 0..rounds {
        // Nothing runs on a device after the fault a replay ended with, as the recording did.
        if reports.iter().any(|report| report.ended_as_recorded.is_some()) {
            break;
        }
        // Every other round runs the modes the other way round: what the order favours (a warmer
        // device, the first run's clocks) favours neither.
        let order: Vec<usize> = match round % 2 {
            0 => (0..modes.len()).collect(),
            _ => (0..modes.len()).rev().collect(),
        };
        for index in order {
            let mode = modes[index];
            let run = RunOptions {
                mode,
                iterations: args.iterations as usize,
                compare: args.compare && round == 0,
                // The backend times every node once asked to; each run takes its timings.
                profile: args.profile.is_some(),
                inputs: inputs.clone(),
                rules: rules.clone(),
            };
            let mut progress = Progress::new(&format!("replay ({})", mode_name(mode)));
            let mut report = replayer.run(&run, &mut |done, total| progress.update(done, total)).map_err(|error| match error {
                ReplayError::Blob(error) => unreadable(&args.trace, error),
                other => other.into(),
            })?;
            if let Some(comparison) = &mut report.comparison {
                comparison.incomplete = trace.partial.iter().map(|partial| format!("recording stopped at {}: {}", partial.call, partial.reason)).collect();
            }
            // The first round runs the modes in order, so each report's place is its mode's.
            match reports.get_mut(index) {
                Some(earlier) => earlier.pool(report),
                None => reports.push(report),
            }
        }
    }
    write_outputs(&mut replayer, trace, args)?;
    // With `--mode both`, the graph run's times: the command buffers are what is profiled.
    if let (Some(path), Some(report)) = (&args.profile, reports.first()) {
        let profile = chrome_trace(&trace.queues, &report.device, &report.timings);
        write_file(path, profile.to_string().as_bytes())?;
    }
    if args.json {
        print_json(&json_report(&reports))?;
    } else {
        print!("{}", plain_report(&reports));
    }
    let mismatch = reports.iter().any(|r| r.comparison.as_ref().is_some_and(|c| !c.passed()));
    Ok(if mismatch { Exit::Mismatch.into() } else { ExitCode::SUCCESS })
}

/// One pass over the trace before anything runs: it must be valid (its blobs read whole
/// included), and the patches must fit the nodes they target.
fn check(reader: &TraceReader, args: &ReplayArgs) -> Result<Overrides, Failure> {
    let mut validator = Validator::new(reader);
    let mut patches = OverrideCheck::new(reader.objects(), reader.node_count(), &args.set, &args.global);
    reader
        .for_each_segment(|segment| {
            validator.segment(&segment);
            // Patches are checked on valid nodes only; a problem stops the replay anyway.
            if validator.problems().is_empty() {
                patches.segment(&segment);
            }
            Ok::<(), trace_format::FormatError>(())
        })
        .map_err(|error| unreadable(&args.trace, error))?;
    validator.blob_contents();
    refuse_problems(&args.trace, &validator.finish())?;
    patches.finish().map_err(|error| Failure::bad_input(error.to_string()))
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Graph => "graph",
        Mode::Eager => "eager",
    }
}

fn memory_exists(trace: &Trace, mem: MemId, option: &str) -> Result<u64, Failure> {
    trace.memories.get(mem.index()).map(|m| m.size).ok_or_else(|| {
        Failure::bad_input(format!("{option} {mem}: memory {mem} does not exist (the trace has {})", trace.memories.len()))
    })
}

fn read_inputs(trace: &Trace, inputs: &[MemFile]) -> Result<BTreeMap<MemId, Vec<u8>>, Failure> {
    let mut contents = BTreeMap::new();
    for input in inputs {
        let size = memory_exists(trace, input.mem, "--input")?;
        let data = std::fs::read(&input.path)
            .map_err(|error| Failure::bad_input(format!("--input {}: cannot read {}: {error}", input.mem, input.path.display())))?;
        if data.len() as u64 != size {
            return Err(Failure::bad_input(format!(
                "--input {}: {} holds {} bytes; memory {} has {size}",
                input.mem,
                input.path.display(),
                data.len(),
                input.mem
            )));
        }
        contents.insert(input.mem, data);
    }
    Ok(contents)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes).map_err(|error| Failure::bad_input(format!("cannot write {}: {error}", path.display())))
}

/// `--output` and `--dump`: final contents after the last run.
fn write_outputs(replayer: &mut Replayer<'_>, trace: &Trace, args: &ReplayArgs) -> Result<(), Failure> {
    for output in &args.output {
        write_file(&output.path, &replayer.read_memory(output.mem)?)?;
    }
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir).map_err(|error| Failure::bad_input(format!("cannot create {}: {error}", dir.display())))?;
        // Stream-ordered memory exists only while the recorded work runs.
        let lasting = trace.memories.iter().enumerate().filter(|(_, m)| m.kind != MemKind::StreamOrdered);
        for mem in lasting.map(|(id, _)| MemId(id as u32)) {
            write_file(&dir.join(format!("mem{mem}.bin")), &replayer.read_memory(mem)?)?;
        }
    }
    Ok(())
}

/// Graph over eager median time: how much command buffers gain.
fn speedup(reports: &[RunReport]) -> Option<(f64, f64, f64)> {
    let median = |mode| reports.iter().find(|r| r.mode == mode)?.time_per_iteration_us.map(|t| t.median);
    let (graph, eager) = (median(Mode::Graph)?, median(Mode::Eager)?);
    Some((graph, eager, eager / graph))
}

/// How each memory object is compared: within `--tolerance` as `--element` says, else as the
/// kernels' parameter types the trace keeps say (memory of no known float type byte for byte).
fn rules(reader: &TraceReader, args: &ReplayArgs) -> Result<HashMap<MemId, Rule>, Failure> {
    let Some(tolerance) = args.tolerance else { return Ok(HashMap::new()) };
    let elements: HashMap<MemId, Element> = match args.element {
        Some(element) => (0..reader.objects().memories.len()).map(|mem| (MemId(mem as u32), element)).collect(),
        None => memory_elements(reader).map_err(|error| unreadable(&args.trace, error))?,
    };
    Ok(elements.into_iter().map(|(mem, element)| (mem, Rule::Within(element, tolerance))).collect())
}

fn json_report(reports: &[RunReport]) -> serde_json::Value {
    match reports {
        [single] => serde_json::json!(single),
        _ => {
            let mut both = serde_json::json!({ "mode": "both" });
            for report in reports {
                both[mode_name(report.mode)] = serde_json::json!(report);
            }
            both["eager_over_graph"] = serde_json::json!(speedup(reports).map(|(_, _, ratio)| ratio));
            both
        }
    }
}

fn plain_report(reports: &[RunReport]) -> String {
    let mut text = String::new();
    for report in reports {
        text += &format!(
            "{} on {}: {} iterations, {} segments, {} families, {} partitions per iteration, \
             {} command buffers built, {} native updates, {} rebuilds\n",
            mode_name(report.mode),
            report.device,
            report.iterations,
            report.segments,
            report.families,
            report.partitions,
            report.command_buffers_built,
            report.native_updates,
            report.rebuilds
        );
        if let Some(t) = report.time_per_iteration_us {
            text += &format!("  time per iteration: min {:.1} µs, median {:.1} µs, max {:.1} µs\n", t.min, t.median, t.max);
            if let Some(submitting) = report.submitting_per_iteration_us {
                text += &format!("  of which submitting: median {:.1} µs (the rest waits for the device)\n", submitting.median);
            }
        }
        if let Some(fault) = &report.ended_as_recorded {
            text += &format!(
                "  ended in segment {} with {}, as the recording did; nothing runs on the device after that, so no further iterations ran\n",
                fault.segment, fault.error
            );
        }
        if let Some(comparison) = &report.comparison {
            let tolerated = match comparison.within_tolerance {
                0 => String::new(),
                n => format!(", {n} within the tolerance"),
            };
            let mut unstable = match comparison.unstable_bytes {
                0 => String::new(),
                n => format!("; {n} bytes differed between runs and are unstable, not compared"),
            };
            if comparison.address_bytes > 0 {
                unstable += &format!("; {} bytes hold addresses, which differ with where memory lies", comparison.address_bytes);
            }
            if comparison.reordered_bytes > 0 {
                unstable += &format!("; {} bytes hold the recorded values in another order", comparison.reordered_bytes);
            }
            if let Some(first) = comparison.hazards.first() {
                text += &format!("  hazards: {} (unordered nodes using the same memory, one writing it), the first: {first}\n", comparison.hazard_count);
            }
            if comparison.passed() {
                text += &format!("  comparison: passed ({} results equal the recording{tolerated}{unstable})\n", comparison.compared);
            } else if let Some(first) = comparison.incomplete.first().filter(|_| comparison.mismatches.is_empty() && comparison.outcomes_differ.is_empty()) {
                text += &format!(
                    "  comparison: INCOMPLETE ({} results equal the recording{tolerated}{unstable}, but the trace is partial: {first}; what it left out is not compared)\n",
                    comparison.compared
                );
            } else {
                let differ = comparison.mismatches.len() + comparison.outcomes_differ.len();
                text += &format!("  comparison: FAILED ({differ} of {} results differ{tolerated}{unstable})\n", comparison.compared);
                for outcome in &comparison.outcomes_differ {
                    text += &format!("    {outcome}\n");
                }
                for reason in &comparison.incomplete {
                    text += &format!("    the trace is partial: {reason}\n");
                }
                for m in &comparison.mismatches {
                    text += &format!(
                        "    segment {} {}: {} stable bytes differ, first at offset {} (expected {} bytes, got {}; its word: {} recorded, {} replayed)\n",
                        m.segment,
                        m.subject(),
                        m.difference.differing_bytes,
                        m.difference.first_offset,
                        m.difference.expected_len,
                        m.difference.actual_len,
                        m.expected_word,
                        m.actual_word
                    );
                }
            }
        }
    }
    if let Some((graph, eager, ratio)) = speedup(reports) {
        let verdict = if ratio >= 1.0 {
            format!("command buffers are {ratio:.2}x faster")
        } else {
            format!("command buffers are {:.2}x slower", 1.0 / ratio)
        };
        text += &format!("what-if: graph {graph:.1} µs vs eager {eager:.1} µs per iteration (median): {verdict}\n");
    }
    text
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Updates {
    Native,
    Rebuild,
}
