//! Settings read once from the environment: where the trace goes, what to capture, what to log.

use std::path::PathBuf;

/// Which windows between host synchronizations (segments) are recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
    /// Every segment (`all`, the default); a capture marker pair (profiler stop/start) pauses it.
    All,
    /// Only the segments between a start marker and a stop marker (`markers`).
    Markers,
    /// Segments by ordinal, counted from 0 in the order the program runs them (`3`, `2-5`, `4-`).
    Segments { first: u64, last: Option<u64> },
}

impl Capture {
    /// Whether the segment with this ordinal is in the range (markers aside).
    pub fn includes(self, ordinal: u64) -> bool {
        match self {
            Capture::All | Capture::Markers => true,
            Capture::Segments { first, last } => ordinal >= first && last.is_none_or(|last| ordinal <= last),
        }
    }

    pub fn parse(text: &str) -> Result<Capture, String> {
        let text = text.trim();
        let number = |s: &str| s.trim().parse::<u64>().map_err(|_| format!("`{s}` is not a segment number"));
        match text {
            "" | "all" => Ok(Capture::All),
            "markers" => Ok(Capture::Markers),
            _ => match text.split_once('-') {
                None => number(text).map(|n| Capture::Segments { first: n, last: Some(n) }),
                Some((first, "")) => Ok(Capture::Segments { first: number(first)?, last: None }),
                Some((first, last)) => {
                    let (first, last) = (number(first)?, number(last)?);
                    if last < first {
                        return Err(format!("segment range {first}-{last} is empty"));
                    }
                    Ok(Capture::Segments { first, last: Some(last) })
                }
            },
        }
    }
}

/// Which expected memory contents the recording keeps for comparisons, besides the data the
/// host received (always kept): each costs a read of device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// The final contents of memory the capture wrote, at the end of the capture (`end`, the default).
    End,
    /// Also the contents each `n`-th window wrote, when it ends (`windows` for every window, or `N`).
    EveryWindows(u64),
}

impl Verify {
    pub fn parse(text: &str) -> Result<Verify, String> {
        match text.trim() {
            "" | "end" => Ok(Verify::End),
            "windows" => Ok(Verify::EveryWindows(1)),
            number => match number.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Verify::EveryWindows(n)),
                _ => Err(format!("`{number}` is not `end`, `windows` or a number of windows")),
            },
        }
    }

    /// Whether the window written as segment number `segment` (from 0) keeps what it wrote.
    pub fn reads_window(self, segment: u32) -> bool {
        match self {
            Verify::End => false,
            Verify::EveryWindows(n) => (u64::from(segment) + 1) % n == 0,
        }
    }
}

/// How the shim learns what the host wrote into memory a GPU also uses (pinned, registered,
/// managed memory), which the host changes without an API call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostWriteTracking {
    /// Such memory is read whole again at its first use after each host synchronization
    /// (`reread`).
    Reread,
    /// The pages the host writes are watched through page protection and only those are kept,
    /// with writes made while kernels run (`watch`, the default).
    Watch,
}

impl HostWriteTracking {
    pub fn parse(text: &str) -> Result<HostWriteTracking, String> {
        match text.trim() {
            "reread" => Ok(HostWriteTracking::Reread),
            "" | "watch" => Ok(HostWriteTracking::Watch),
            other => Err(format!("`{other}` is not `reread` or `watch`")),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Off,
    Error,
    Warn,
    Info,
    Debug,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSettings {
    pub level: Level,
    /// Log file; standard error when `None`.
    pub file: Option<PathBuf>,
}

impl LogSettings {
    /// `LEVEL` or `LEVEL,file=PATH`.
    pub fn parse(text: &str) -> Result<LogSettings, String> {
        let mut parts = text.splitn(2, ',');
        let level = match parts.next().unwrap_or("").trim() {
            "off" => Level::Off,
            "error" => Level::Error,
            "" | "warn" => Level::Warn,
            "info" => Level::Info,
            "debug" => Level::Debug,
            other => return Err(format!("unknown log level `{other}` (off, error, warn, info, debug)")),
        };
        let file = match parts.next() {
            None => None,
            Some(rest) => match rest.trim().strip_prefix("file=") {
                Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
                _ => return Err(format!("`{rest}` should be `file=PATH`")),
            },
        };
        Ok(LogSettings { level, file })
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Trace path with `%p` still in it.
    pub output: String,
    pub capture: Capture,
    pub verify: Verify,
    pub host_writes: HostWriteTracking,
    pub log: LogSettings,
    /// Problems found in the environment, logged once logging is set up.
    pub problems: Vec<String>,
}

impl Config {
    pub fn from_env() -> Config {
        let var = |name: &str| std::env::var(name).ok();
        Config::from_values(var("REPRISE_OUTPUT"), var("REPRISE_CAPTURE"), var("REPRISE_VERIFY"), var("REPRISE_HOST_WRITES"), var("REPRISE_LOG"))
    }

    fn from_values(output: Option<String>, capture: Option<String>, verify: Option<String>, host_writes: Option<String>, log: Option<String>) -> Config {
        let mut problems = Vec::new();
        let capture = capture.map_or(Ok(Capture::All), |text| Capture::parse(&text)).unwrap_or_else(|problem| {
            problems.push(format!("REPRISE_CAPTURE: {problem}; capturing all segments"));
            Capture::All
        });
        let verify = verify.map_or(Ok(Verify::End), |text| Verify::parse(&text)).unwrap_or_else(|problem| {
            problems.push(format!("REPRISE_VERIFY: {problem}; verifying the end of the capture"));
            Verify::End
        });
        let host_writes = host_writes.map_or(Ok(HostWriteTracking::Watch), |text| HostWriteTracking::parse(&text)).unwrap_or_else(|problem| {
            problems.push(format!("REPRISE_HOST_WRITES: {problem}; watching the pages the host writes"));
            HostWriteTracking::Watch
        });
        let default_log = LogSettings { level: Level::Warn, file: None };
        let log = log.map_or(Ok(default_log.clone()), |text| LogSettings::parse(&text)).unwrap_or_else(|problem| {
            problems.push(format!("REPRISE_LOG: {problem}; logging warnings to standard error"));
            default_log
        });
        let output = output.filter(|path| !path.is_empty()).unwrap_or_else(|| "reprise-%p.trace".to_string());
        Config { output, capture, verify, host_writes, log, problems }
    }

    /// The trace path for process `pid`.
    pub fn output_path(&self, pid: u32) -> PathBuf {
        PathBuf::from(self.output.replace("%p", &pid.to_string()))
    }
}

/// The process's settings, read on first use.
pub fn get() -> &'static Config {
    static CONFIG: std::sync::OnceLock<Config> = std::sync::OnceLock::new();
    CONFIG.get_or_init(Config::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_ranges() {
        assert_eq!(Capture::parse("all"), Ok(Capture::All));
        assert_eq!(Capture::parse("markers"), Ok(Capture::Markers));
        assert_eq!(Capture::parse("3"), Ok(Capture::Segments { first: 3, last: Some(3) }));
        assert_eq!(Capture::parse("2-5"), Ok(Capture::Segments { first: 2, last: Some(5) }));
        assert_eq!(Capture::parse("4-"), Ok(Capture::Segments { first: 4, last: None }));
        assert!(Capture::parse("5-2").is_err());
        assert!(Capture::parse("x").is_err());
        let range = Capture::parse("2-3").unwrap();
        assert_eq!((0..6).map(|n| range.includes(n)).collect::<Vec<_>>(), [false, false, true, true, false, false]);
    }

    #[test]
    fn log_settings() {
        assert_eq!(LogSettings::parse("debug"), Ok(LogSettings { level: Level::Debug, file: None }));
        assert_eq!(
            LogSettings::parse("info,file=/tmp/x.log"),
            Ok(LogSettings { level: Level::Info, file: Some(PathBuf::from("/tmp/x.log")) })
        );
        assert!(LogSettings::parse("loud").is_err());
        assert!(LogSettings::parse("info,/tmp/x").is_err());
    }

    #[test]
    fn bad_values_fall_back_and_are_reported() {
        let config = Config::from_values(Some("out-%p.trace".into()), Some("x-y".into()), Some("0".into()), Some("guess".into()), Some("nope".into()));
        assert_eq!(config.capture, Capture::All);
        assert_eq!(config.verify, Verify::End);
        assert_eq!(config.host_writes, HostWriteTracking::Watch);
        assert_eq!(config.log.level, Level::Warn);
        assert_eq!(config.problems.len(), 4);
        assert_eq!(config.output_path(42), PathBuf::from("out-42.trace"));
        assert_eq!(Config::from_values(None, None, None, None, None).output_path(7), PathBuf::from("reprise-7.trace"));
        assert_eq!(HostWriteTracking::parse("reread"), Ok(HostWriteTracking::Reread));
        assert_eq!(Config::from_values(None, None, None, None, None).host_writes, HostWriteTracking::Watch);
    }

    #[test]
    fn verify_settings() {
        assert_eq!(Verify::parse("end"), Ok(Verify::End));
        assert_eq!(Verify::parse("windows"), Ok(Verify::EveryWindows(1)));
        assert_eq!(Verify::parse("3"), Ok(Verify::EveryWindows(3)));
        assert!(Verify::parse("often").is_err());
        let every_third = Verify::EveryWindows(3);
        assert_eq!((0..6).map(|s| every_third.reads_window(s)).collect::<Vec<_>>(), [false, false, true, false, false, true]);
        assert!(!Verify::End.reads_window(0));
    }
}
