//! Running the `replayer` binary on traces written to a scratch directory.
// Each test file uses a part of these helpers.
#![allow(dead_code)]

pub mod jacobi;

use std::path::{Path, PathBuf};
use std::process::Command;
use trace_format::{write_trace, BlobStore, Trace};

/// A fresh directory for one test, removed when the test passes (kept for a look when it fails).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Tests run in parallel, so each gets a directory named after it and the process.
pub fn scratch(test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("replayer-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    Scratch(dir)
}

pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn replayer(args: &[&str]) -> Outcome {
    replayer_with(args, |_| {})
}

pub fn replayer_with(args: &[&str], configure: impl FnOnce(&mut Command)) -> Outcome {
    let mut command = Command::new(env!("CARGO_BIN_EXE_replayer"));
    command.args(args);
    configure(&mut command);
    let output = command.output().expect("replayer runs");
    Outcome {
        code: output.status.code().expect("replayer exits rather than being killed"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

pub fn write(dir: &Path, name: &str, (trace, blobs): &(Trace, BlobStore)) -> PathBuf {
    let path = dir.join(name);
    write_trace(&path, trace, blobs).expect("trace written");
    path
}
