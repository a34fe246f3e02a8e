//! Builds the test programs, runs them natively and under the shim, and reads the traces.
//! (Each test crate uses part of it.)
#![allow(dead_code)]

pub mod host_replay;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use trace_format::{read_trace, BlobId, Completeness, TraceFile};

/// An OpenCL runtime the tests run on: the platform name the programs pick, and the
/// environment that makes the loader list it.
#[derive(Clone, Debug)]
pub struct Runtime {
    pub platform: &'static str,
    env: Vec<(String, String)>,
}

impl Runtime {
    pub fn pocl() -> Runtime {
        Runtime { platform: "Portable Computing Language", env: Vec::new() }
    }

    /// Intel's CPU runtime, where `REPRISE_INTEL_OCL` names it (`scripts/env.sh` sets it).
    pub fn intel() -> Option<Runtime> {
        let Some(library) = std::env::var_os("REPRISE_INTEL_OCL") else {
            eprintln!("REPRISE_INTEL_OCL is not set: Intel's runtime is not tested (source scripts/env.sh)");
            return None;
        };
        let directory = Path::new(&library).parent().map(Path::to_path_buf).unwrap_or_default();
        let library_path = match std::env::var("LD_LIBRARY_PATH") {
            Ok(old) if !old.is_empty() => format!("{}:{old}", directory.display()),
            _ => directory.display().to_string(),
        };
        let env = vec![
            ("OCL_ICD_FILENAMES".to_string(), library.to_string_lossy().into_owned()),
            ("LD_LIBRARY_PATH".to_string(), library_path),
        ];
        Some(Runtime { platform: "Intel(R) OpenCL", env })
    }
}

/// A scratch directory for one test, removed when the test passes.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let unique = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("reprise-shim-{test}-{}-{unique}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create the scratch directory");
        Scratch(path)
    }

    /// Compiles `tests/programs/<name>.c` against the system's OpenCL loader.
    pub fn compile(&self, name: &str) -> PathBuf {
        self.cc(name, name, &["-lOpenCL", "-ldl"])
    }

    /// Compiles `tests/programs/<name>.c` into `output` with extra `flags`.
    pub fn cc(&self, name: &str, output: &str, flags: &[&str]) -> PathBuf {
        let source = programs_dir().join(format!("{name}.c"));
        let binary = self.0.join(output);
        let status = Command::new("cc")
            .args(["-Wall", "-Werror", "-O1", "-o"])
            .arg(&binary)
            .arg(&source)
            .args(flags)
            .status()
            .expect("run cc");
        assert!(status.success(), "cc could not build {}", source.display());
        binary
    }

    /// The traces written into the scratch directory.
    pub fn traces(&self) -> Vec<PathBuf> {
        let mut traces: Vec<PathBuf> = std::fs::read_dir(&self.0)
            .expect("list the scratch directory")
            .map(|entry| entry.expect("read a directory entry").path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "trace"))
            .collect();
        traces.sort();
        traces
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// `target/<profile>/libshim.so`, built with the tests.
pub fn shim_library() -> PathBuf {
    let deps = std::env::current_exe().expect("the test's path");
    let library = deps.parent().and_then(Path::parent).expect("target directory").join("libshim.so");
    assert!(library.exists(), "{} is missing: build the shim first", library.display());
    library
}

/// How a program ran under the shim (its output checked against a native run) and its trace.
pub struct Recording {
    pub recorded: Output,
    pub trace: TraceFile,
}

impl Recording {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.recorded.stdout).into_owned()
    }

    pub fn blob(&self, id: BlobId) -> Vec<u8> {
        self.trace.blobs.get(id).expect("a blob the trace names").into_owned()
    }
}

/// Runs `program args` natively and under the shim with `env` and `runtime`, checks that both
/// succeed with the same output and that the shim wrote one complete trace, and reads it.
pub fn record(scratch: &Scratch, runtime: &Runtime, program: &[&str], env: &[(&str, &str)]) -> Recording {
    let run = |shim: bool| {
        let mut command = Command::new(program[0]);
        command.args(&program[1..]).envs(runtime.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        command.envs(env.iter().copied());
        if shim {
            command.env("LD_PRELOAD", shim_library()).env("REPRISE_OUTPUT", scratch.0.join("recorded-%p.trace"));
        }
        let output = command.output().expect("run the test program");
        assert!(
            output.status.success(),
            "{program:?} (shim: {shim}) failed: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        output
    };
    let native = run(false);
    let recorded = run(true);
    assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&native.stdout),
        "the program's output changed under the shim"
    );
    let traces = scratch.traces();
    assert_eq!(traces.len(), 1, "expected one trace, found {traces:?}");
    let trace = read_trace(&traces[0]).expect("read the trace back");
    assert!(matches!(trace.completeness, Completeness::Complete), "{:?}", trace.completeness);
    Recording { recorded, trace }
}
