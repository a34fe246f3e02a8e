//! What kernels print while a segment replays. CUDA's device `printf` reaches this process's
//! standard output through the C library, as it reached the program's; to compare it with the
//! recording, file descriptor 1 is pointed at a memory file while the segment runs.

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

/// Flushes Rust's and the C library's buffered standard output.
fn flush_all() -> io::Result<()> {
    io::stdout().flush()?;
    // SAFETY: a null stream flushes every C output stream.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    Ok(())
}

/// `text` with its lines sorted: threads of a kernel print in no fixed order, so what counts is
/// which lines were printed, each as often as printed.
pub fn sorted_lines(text: &[u8]) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = text.split_inclusive(|&byte| byte == b'\n').collect();
    lines.sort_unstable();
    lines.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_compare_in_any_order() {
        assert_eq!(sorted_lines(b"b 2\na 1\nb 2\nc"), b"a 1\nb 2\nb 2\nc");
        assert_eq!(sorted_lines(b""), b"");
    }

    #[test]
    fn what_goes_to_standard_output_is_captured_and_the_output_restored() {
        let capture = StdoutCapture::begin().expect("stdout redirects");
        // SAFETY: writing a few bytes to standard output.
        unsafe { libc::write(libc::STDOUT_FILENO, b"from the device\n".as_ptr().cast(), 16) };
        assert_eq!(capture.finish().expect("stdout comes back"), b"from the device\n");
    }
}
