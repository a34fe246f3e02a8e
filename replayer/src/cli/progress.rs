//! A one-line progress display on stderr, shown only when stderr is a terminal.

use std::io::{IsTerminal, Write};

pub struct Progress {
    label: String,
    shown: bool,
}

impl Progress {
    pub fn new(label: &str) -> Self {
        Progress { label: label.to_string(), shown: std::io::stderr().is_terminal() }
    }

    /// Shows `done` of `total` (iterations).
    pub fn update(&mut self, done: usize, total: usize) {
        if self.shown {
            let mut stderr = std::io::stderr();
            let _ = write!(stderr, "\r{}: iteration {done}/{total}", self.label);
            let _ = stderr.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.shown {
            // Clear the line so that the report starts on a clean one.
            eprint!("\r\x1b[2K");
        }
    }
}
