//! The OpenCL test programs (`tests/opencl/`, `tests/examples/`): built into a scratch directory, run natively and
//! under the shim.

use crate::artifacts::{repository_root, shim_library};
use crate::device::Device;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// How a test program is built and started.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// A C program linked against the system ICD loader. Paths are relative to `tests/`.
    LinkedC(&'static str),
    /// A C program that opens the loader itself with `dlopen`, so it is not linked against it.
    DlopenC(&'static str),
    /// A Python script using pyopencl (run with `$REPRISE_PYTHON`, else `python3`).
    Python(&'static str),
}

/// A test program ready to run.
pub struct Program {
    argv: Vec<PathBuf>,
}

/// What a run produced that the program's behaviour consists of.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub status: ExitStatus,
}

impl Source {
    /// Compiles a C program into `dir`; a script needs no build.
    pub fn build(self, dir: &Path) -> Program {
        let (file, libraries): (&str, &[&str]) = match self {
            Source::LinkedC(file) => (file, &["-lOpenCL", "-lm"]),
            Source::DlopenC(file) => (file, &["-ldl", "-lm"]),
            Source::Python(file) => {
                let python = std::env::var_os("REPRISE_PYTHON").filter(|p| !p.is_empty()).unwrap_or("python3".into());
                return Program { argv: vec![PathBuf::from(python), tests_dir().join(file)] };
            }
        };
        let stem = Path::new(file).file_stem().expect("a C file name");
        let executable = dir.join(stem);
        let output = Command::new("cc")
            .args(["-O2", "-Wall", "-Werror", "-o"])
            .arg(&executable)
            .arg(tests_dir().join(file))
            .args(libraries)
            .output()
            .expect("the C compiler `cc` could not be started");
        assert!(output.status.success(), "building {file} failed:\n{}", String::from_utf8_lossy(&output.stderr));
        Program { argv: vec![executable] }
    }
}

impl Program {
    pub fn run_natively(&self, device: &Device) -> Outcome {
        run(self.command(device))
    }

    /// Runs under the shim, recording into `trace`.
    pub fn run_recorded(&self, device: &Device, trace: &Path) -> Outcome {
        let mut command = self.command(device);
        command.env("LD_PRELOAD", shim_library()).env("REPRISE_OUTPUT", trace);
        run(command)
    }

    fn command(&self, device: &Device) -> Command {
        let mut command = Command::new(&self.argv[0]);
        command.args(&self.argv[1..]);
        device.configure(&mut command);
        command
    }
}

fn run(mut command: Command) -> Outcome {
    let output = command.output().unwrap_or_else(|error| panic!("could not start {command:?}: {error}"));
    if !output.status.success() {
        eprintln!("{command:?} failed; its stderr:\n{}", String::from_utf8_lossy(&output.stderr));
    }
    Outcome { stdout: String::from_utf8_lossy(&output.stdout).into_owned(), status: output.status }
}

fn tests_dir() -> PathBuf {
    repository_root().join("tests")
}
