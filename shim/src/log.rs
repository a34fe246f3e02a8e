//! The shim's own messages, filtered by `REPRISE_LOG`, to standard error or a file.

use crate::config::{self, Level};
use std::io::Write;
use std::sync::{Mutex, OnceLock};

struct Logger {
    level: Level,
    file: Option<Mutex<std::fs::File>>,
}

fn logger() -> &'static Logger {
    static LOGGER: OnceLock<Logger> = OnceLock::new();
    LOGGER.get_or_init(|| {
        let settings = &config::get().log;
        let mut problems = config::get().problems.clone();
        let file = settings.file.as_ref().and_then(|path| {
            match std::fs::OpenOptions::new().create(true).append(true).open(path) {
                Ok(file) => Some(Mutex::new(file)),
                Err(error) => {
                    problems.push(format!("cannot open log file {}: {error}; logging to standard error", path.display()));
                    None
                }
            }
        });
        let logger = Logger { level: settings.level, file };
        for problem in problems {
            logger.write(Level::Warn, format_args!("{problem}"));
        }
        logger
    })
}

impl Logger {
    fn write(&self, level: Level, message: std::fmt::Arguments<'_>) {
        if level > self.level {
            return;
        }
        let line = format!("reprise[{}] {}: {message}\n", std::process::id(), level_name(level));
        // A failed log write has nowhere better to go; the program must go on regardless.
        let _ = match &self.file {
            Some(file) => file.lock().unwrap_or_else(std::sync::PoisonError::into_inner).write_all(line.as_bytes()),
            None => std::io::stderr().write_all(line.as_bytes()),
        };
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Off => "off",
        Level::Error => "error",
        Level::Warn => "warning",
        Level::Info => "info",
        Level::Debug => "debug",
    }
}

pub fn enabled(level: Level) -> bool {
    level <= logger().level
}

pub fn write(level: Level, message: std::fmt::Arguments<'_>) {
    logger().write(level, message);
}

macro_rules! error {
    ($($arg:tt)*) => { $crate::log::write($crate::config::Level::Error, format_args!($($arg)*)) };
}
macro_rules! warning {
    ($($arg:tt)*) => { $crate::log::write($crate::config::Level::Warn, format_args!($($arg)*)) };
}
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::write($crate::config::Level::Info, format_args!($($arg)*)) };
}
macro_rules! debug {
    ($($arg:tt)*) => {
        if $crate::log::enabled($crate::config::Level::Debug) {
            $crate::log::write($crate::config::Level::Debug, format_args!($($arg)*))
        }
    };
}
pub(crate) use {debug, error, info, warning};
