//! The test programs: C sources (`tests/opencl/`, `tests/level_zero/`) built with `cc` into a scratch directory,
//! and Python scripts; run natively or under the shim, with their output captured.

use crate::binaries::{shim_library, workspace_root};
use crate::device::Device;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// A runnable test program and the scratch directory that holds its build and its traces.
pub struct Program {
    pub name: String,
    command: Vec<OsString>,
    scratch: TempDir,
}

/// How a C program is built.
pub struct Build<'a> {
    /// The source, relative to the workspace root.
    pub source: &'a str,
    /// `-D` definitions, as `NAME=VALUE`.
    pub defines: &'a [&'a str],
    /// Libraries to link against (`OpenCL`, `ze_loader`; none for a program that `dlopen`s its loader).
    pub libraries: &'a [&'a str],
}

/// What a run printed and how it ended.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub code: Option<i32>,
}

pub fn source_path(relative: &str) -> PathBuf {
    workspace_root().join(relative)
}

impl Program {
    /// `tests/opencl/<name>.c`, linked against the loader.
    pub fn opencl_c(name: &str) -> Program {
        let source = format!("tests/opencl/{name}.c");
        Program::build_c(name, &Build { source: &source, defines: &[], libraries: &["OpenCL"] })
    }

    pub fn build_c(name: &str, build: &Build) -> Program {
        let scratch = scratch_dir();
        let binary = scratch.path().join(name);
        let mut cc = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()));
        cc.args(["-O1", "-Wall", "-D_GNU_SOURCE", "-o"]).arg(&binary).arg(source_path(build.source));
        cc.args(build.defines.iter().map(|define| format!("-D{define}")));
        cc.args(build.libraries.iter().map(|library| format!("-l{library}")));
        cc.args(["-ldl", "-lm"]);
        let output = cc.output().expect("cc runs (is a C compiler installed?)");
        assert!(output.status.success(), "building {} failed:\n{}", build.source, String::from_utf8_lossy(&output.stderr));
        Program { name: name.to_owned(), command: vec![binary.into()], scratch }
    }

    /// `tests/opencl/<file>` run by `$REPRISE_PYTHON` (pyopencl and numpy), else `python3`.
    pub fn python(file: &str) -> Program {
        let python = std::env::var_os("REPRISE_PYTHON").unwrap_or_else(|| "python3".into());
        let script = source_path(&format!("tests/opencl/{file}"));
        let name = file.trim_end_matches(".py").to_owned();
        Program { name, command: vec![python, script.into()], scratch: scratch_dir() }
    }

    /// Any command (for programs that never use OpenCL).
    pub fn command(name: &str, command: &[&str]) -> Program {
        Program { name: name.to_owned(), command: command.iter().map(OsString::from).collect(), scratch: scratch_dir() }
    }

    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// Where a recording of this program on `device` goes.
    pub fn trace_path(&self, device: &Device) -> PathBuf {
        self.scratch().join(format!("{}-{}.trace", self.name, device.name()))
    }

    pub fn run_native(&self, device: &Device) -> Outcome {
        self.run_with(|command| device.configure(command))
    }

    /// Runs under `LD_PRELOAD=libshim.so` with `REPRISE_OUTPUT=trace`.
    pub fn run_recorded(&self, device: &Device, trace: &Path) -> Outcome {
        let shim = shim_library();
        self.run_with(|command| {
            device.configure(command);
            command.env("LD_PRELOAD", &shim).env("REPRISE_OUTPUT", trace);
        })
    }

    /// Runs natively (which must succeed) and under the shim, asserts both printed the same and
    /// ended alike, and returns the trace's path.
    pub fn record(&self, device: &Device) -> PathBuf {
        let native = self.run_native(device);
        assert_eq!(native.code, Some(0), "{} failed natively on {}: {native:?}", self.name, device.name());
        let trace = self.trace_path(device);
        let recorded = self.run_recorded(device, &trace);
        assert_eq!(native, recorded, "{} behaves differently under the shim on {}", self.name, device.name());
        assert!(trace.is_file(), "{} left no trace at {}", self.name, trace.display());
        trace
    }

    /// Runs the program in its scratch directory with the environment `configure` gives it.
    pub fn run_with(&self, configure: impl FnOnce(&mut Command)) -> Outcome {
        let mut command = Command::new(&self.command[0]);
        command.args(&self.command[1..]).current_dir(self.scratch());
        configure(&mut command);
        let output = command.output().unwrap_or_else(|error| panic!("{} does not start: {error}", self.name));
        if !output.stderr.is_empty() {
            eprintln!("{} stderr:\n{}", self.name, String::from_utf8_lossy(&output.stderr));
        }
        Outcome { stdout: String::from_utf8_lossy(&output.stdout).into_owned(), code: output.status.code() }
    }
}

fn scratch_dir() -> TempDir {
    tempfile::Builder::new().prefix("reprise-e2e-").tempdir().expect("a scratch directory in $TMPDIR")
}
