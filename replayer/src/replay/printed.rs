//! What kernels print while a segment replays. CUDA's device `printf` reaches this process's
//! standard output through the C library, as it reached the program's; to compare it with the
//! recording, file descriptor 1 is pointed at a memory file while the segment runs.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Standard output redirected into a memory file until `finish` (or drop) puts it back.
pub struct StdoutCapture {
    saved: Option<OwnedFd>,
    file: File,
}

impl StdoutCapture {
    pub fn begin() -> io::Result<StdoutCapture> {
        flush_all()?;
        // SAFETY: plain system calls on a name and descriptors this function owns.
        let file = unsafe {
            let fd = libc::memfd_create(c"reprise-printed".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            File::from_raw_fd(fd)
        };
        // SAFETY: duplicating standard output, whose copy this capture owns.
        let saved = unsafe { libc::dup(libc::STDOUT_FILENO) };
        if saved < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `saved` was just made and nothing else owns it.
        let saved = unsafe { OwnedFd::from_raw_fd(saved) };
        // SAFETY: both descriptors are open.
        if unsafe { libc::dup2(file.as_raw_fd(), libc::STDOUT_FILENO) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(StdoutCapture { saved: Some(saved), file })
    }

    /// How many bytes were written so far, the C library's buffered ones included.
    pub fn len(&self) -> io::Result<u64> {
        flush_all()?;
        Ok(self.file.metadata()?.len())
    }

    /// Puts standard output back; returns what was written to it meanwhile.
    pub fn finish(mut self) -> io::Result<Vec<u8>> {
        self.restore()?;
        let mut text = Vec::new();
        self.file.seek(SeekFrom::Start(0))?;
        self.file.read_to_end(&mut text)?;
        Ok(text)
    }

    fn restore(&mut self) -> io::Result<()> {
        let Some(saved) = self.saved.take() else { return Ok(()) };
        flush_all()?;
        // SAFETY: `saved` is open; standard output gets its original file back.
        if unsafe { libc::dup2(saved.as_raw_fd(), libc::STDOUT_FILENO) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for StdoutCapture {
    fn drop(&mut self) {
        // Nothing better to do with a failure here: the replay is already ending early.
        let _ = self.restore();
    }
}

/// Flushes with `flush` until `capture` holds `expected` bytes, at most `FLUSHES` times. CUDA
/// writes out a child grid's lines (launched from the device) one or more launches after the
/// grid ended, and lines printed late went into the next segment's output. What comes is written
/// by launches, not by time, so there is no sleep: a replay printing less than the recording
/// costs at most `FLUSHES` flushes (a few milliseconds).
pub fn flush_until<E>(capture: &StdoutCapture, expected: u64, flush: &mut dyn FnMut() -> Result<(), E>) -> Result<(), E>
where
    E: From<io::Error>,
{
    for _ in 0..FLUSHES {
        flush()?;
        if capture.len()? >= expected {
            break;
        }
    }
    Ok(())
}

const FLUSHES: usize = 64;

/// Flushes Rust's and the C library's buffered standard output.
fn flush_all() -> io::Result<()> {
    io::stdout().flush()?;
    // SAFETY: a null stream flushes every C output stream.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    Ok(())
}

/// Printed lines and how often each was printed: threads of a kernel print in no fixed order, so
/// what counts is which lines were printed, each as often as printed.
#[derive(Debug, Default, PartialEq)]
pub struct Lines(BTreeMap<Vec<u8>, usize>);

impl Lines {
    pub fn of(text: &[u8]) -> Lines {
        let mut lines = BTreeMap::new();
        for line in text.split_inclusive(|&byte| byte == b'\n') {
            *lines.entry(line.to_vec()).or_insert(0) += 1;
        }
        Lines(lines)
    }

    fn count(&self, line: &[u8]) -> usize {
        self.0.get(line).copied().unwrap_or(0)
    }

    /// The lines in sorted order, each as often as printed, leaving out `skipped`.
    fn text_without(&self, skipped: &BTreeSet<Vec<u8>>) -> Vec<u8> {
        let kept = self.0.iter().filter(|(line, _)| !skipped.contains(*line));
        kept.flat_map(|(line, &count)| std::iter::repeat_n(line.as_slice(), count)).collect::<Vec<_>>().concat()
    }
}

/// What replays of one segment printed: the first run's lines, and the lines whose count varied
/// between runs (a line can come out late, from a runtime's own thread, or not at all): unstable.
pub struct PrintedRuns {
    first: Lines,
    unstable: BTreeSet<Vec<u8>>,
}

impl PrintedRuns {
    pub fn new(first: Lines) -> PrintedRuns {
        PrintedRuns { first, unstable: BTreeSet::new() }
    }

    /// A later run printed `now`: lines it printed a different number of times are unstable.
    pub fn later(&mut self, now: &Lines) {
        let varied = self.first.0.keys().chain(now.0.keys()).filter(|line| self.first.count(line) != now.count(line));
        self.unstable.extend(varied.cloned().collect::<Vec<_>>());
    }

    /// The recorded and the last run's stable lines as sorted text, and the bytes of unstable
    /// lines (as often as the recording or the last run printed them, whichever more).
    pub fn stable_texts(&self, recorded: &Lines, last: &Lines) -> (Vec<u8>, Vec<u8>, u64) {
        let unstable_bytes = self.unstable.iter().map(|line| (line.len() * recorded.count(line).max(last.count(line))) as u64).sum();
        (recorded.text_without(&self.unstable), last.text_without(&self.unstable), unstable_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_compare_in_any_order_each_as_often_as_printed() {
        assert_eq!(Lines::of(b"b 2\na 1\nb 2\n"), Lines::of(b"a 1\nb 2\nb 2\n"));
        assert_eq!(Lines::of(b"a\nb\na\n").text_without(&BTreeSet::new()), b"a\na\nb\n");
        assert_ne!(Lines::of(b"a\n"), Lines::of(b"a\na\n"));
    }

    #[test]
    fn lines_whose_count_varies_between_runs_are_left_out_and_counted() {
        let mut runs = PrintedRuns::new(Lines::of(b"x\ny\n"));
        runs.later(&Lines::of(b"y\n"));
        let (recorded, last, _) = runs.stable_texts(&Lines::of(b"y\nz\nx\n"), &Lines::of(b"y\nx\n"));
        assert_eq!((recorded.as_slice(), last.as_slice()), (b"y\nz\n".as_slice(), b"y\n".as_slice()));
        assert_eq!(runs.stable_texts(&Lines::default(), &Lines::of(b"x\nx\n")).2, 4);
        assert_eq!(runs.stable_texts(&Lines::of(b"x\nx\nx\n"), &Lines::default()).2, 6);
    }

    #[test]
    fn what_goes_to_standard_output_is_captured_and_the_output_restored() {
        let capture = StdoutCapture::begin().expect("stdout redirects");
        // SAFETY: writing a few bytes to standard output.
        unsafe { libc::write(libc::STDOUT_FILENO, b"from the device\n".as_ptr().cast(), 16) };
        assert_eq!(capture.finish().expect("stdout comes back"), b"from the device\n");
    }

    #[test]
    fn flushes_go_on_until_what_was_recorded_is_written_or_the_attempts_run_out() {
        let capture = StdoutCapture::begin().expect("stdout redirects");
        let mut flushes = 0;
        // The lines come with the third flush, through the C library's buffer.
        flush_until(&capture, 6, &mut || {
            flushes += 1;
            if flushes == 3 {
                // SAFETY: a NUL-terminated format without conversions.
                unsafe { libc::printf(c"late\n\n".as_ptr()) };
            }
            Ok::<(), io::Error>(())
        })
        .expect("flushes");
        assert_eq!(flushes, 3);
        flushes = 0;
        flush_until(&capture, 7, &mut || {
            flushes += 1;
            Ok::<(), io::Error>(())
        })
        .expect("flushes");
        assert_eq!(flushes, FLUSHES);
        assert_eq!(capture.finish().expect("stdout comes back"), b"late\n\n");
    }
}
