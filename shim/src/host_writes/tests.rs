use super::*;
use std::ffi::c_void;

/// The log of written pages is the process's: tests that look at it run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `pages` pages of fresh anonymous memory, unmapped when dropped.
pub struct Pages {
    pub start: u64,
    pub len: u64,
}

impl Pages {
    pub fn new(pages: u64) -> Pages {
        let len = pages * PAGE;
        // SAFETY: a fresh private anonymous mapping.
        let start = unsafe { libc::mmap(std::ptr::null_mut(), len as usize, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        assert_ne!(start, libc::MAP_FAILED);
        Pages { start: start as u64, len }
    }

    pub fn byte(&self, offset: u64) -> *mut u8 {
        (self.start + offset) as *mut u8
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        unwatch(self.start, self.len);
        // SAFETY: mapped by `new`.
        unsafe { libc::munmap(self.start as *mut c_void, self.len as usize) };
    }
}

/// The written pages among `memory`'s (other tests write theirs meanwhile).
fn written_in(memory: &Pages) -> Vec<u64> {
    let mut pages = Vec::new();
    assert!(take_written(&mut pages));
    pages.retain(|&page| (memory.start..memory.start + memory.len).contains(&page));
    pages.iter().map(|page| (page - memory.start) / PAGE).collect()
}

#[test]
fn the_host_s_writes_to_watched_pages_are_seen_once_per_look() {
    let _alone = alone();
    let memory = Pages::new(4);
    assert!(watch(memory.start, memory.len));
    // SAFETY: inside the mapping; the first write to a page faults once, then goes on.
    unsafe {
        memory.byte(PAGE + 8).write_volatile(7);
        memory.byte(PAGE + 9).write_volatile(8);
        memory.byte(3 * PAGE).write_volatile(9);
        assert_eq!(memory.byte(PAGE + 8).read_volatile(), 7);
    }
    assert_eq!(written_in(&memory), vec![1, 3]);
    assert_eq!(written_in(&memory), Vec::<u64>::new());
    rearm(memory.start + PAGE, PAGE);
    // SAFETY: as above.
    unsafe { memory.byte(PAGE).write_volatile(1) };
    assert_eq!(written_in(&memory), vec![1], "a page protected again is seen again");
    // SAFETY: as above: page 3 was not protected again.
    unsafe { memory.byte(3 * PAGE + 1).write_volatile(1) };
    assert_eq!(written_in(&memory), Vec::<u64>::new());
}

#[test]
fn pages_no_longer_watched_are_writable_without_faults() {
    let _alone = alone();
    let memory = Pages::new(2);
    assert!(watch(memory.start, memory.len));
    unwatch(memory.start, memory.len);
    // SAFETY: inside the mapping, writable again.
    unsafe { memory.byte(10).write_volatile(1) };
    assert_eq!(written_in(&memory), Vec::<u64>::new());
}

#[test]
fn a_read_into_watched_memory_succeeds_and_counts_as_a_write() {
    let _alone = alone();
    let memory = Pages::new(2);
    assert!(watch(memory.start, memory.len));
    let file = std::env::current_exe().expect("the test binary");
    let path = std::ffi::CString::new(file.to_str().expect("a UTF-8 path")).expect("no NUL");
    // SAFETY: a path, a fresh descriptor and a buffer inside the mapping.
    let read = unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY);
        let read = super::io::read(fd, memory.byte(PAGE + 100).cast(), 16);
        libc::close(fd);
        read
    };
    assert_eq!(read, 16, "the kernel wrote the protected page");
    assert_eq!(written_in(&memory), vec![1]);
}

#[test]
fn memory_that_is_not_writable_is_not_watched() {
    let _alone = alone();
    // SAFETY: a fresh read-only mapping.
    let start = unsafe { libc::mmap(std::ptr::null_mut(), PAGE as usize, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    assert!(!watch(start as u64, PAGE));
    // SAFETY: mapped above.
    unsafe { libc::munmap(start, PAGE as usize) };
}

#[test]
fn the_program_s_own_fault_handler_is_kept_behind_the_shim_s() {
    let _alone = alone();
    assert!(signals::install());
    extern "C" fn program_handler(_: libc::c_int) {}
    // SAFETY: zeroed `sigaction` structures; the interposed `sigaction` keeps the program's.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = program_handler as *const () as usize;
        let mut previous: libc::sigaction = std::mem::zeroed();
        assert_eq!(signals::sigaction(libc::SIGSEGV, &action, &mut previous), 0);
        let mut now: libc::sigaction = std::mem::zeroed();
        assert_eq!(signals::sigaction(libc::SIGSEGV, std::ptr::null(), &mut now), 0);
        assert_eq!(now.sa_sigaction, program_handler as *const () as usize, "the program reads back its own handler");
        assert_eq!(signals::sigaction(libc::SIGSEGV, &previous, std::ptr::null_mut()), 0);
    }
    // The shim's handler still sees writes.
    let memory = Pages::new(1);
    assert!(watch(memory.start, memory.len));
    // SAFETY: inside the mapping.
    unsafe { memory.byte(0).write_volatile(1) };
    assert_eq!(written_in(&memory), vec![0]);
}

#[test]
fn a_thread_that_blocks_every_signal_still_writes_watched_pages() {
    let _alone = alone();
    let memory = Pages::new(1);
    assert!(watch(memory.start, memory.len));
    let address = memory.start;
    std::thread::spawn(move || {
        // SAFETY: a full set; as a driver's helper thread blocks every signal.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            signals::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
            let mut now: libc::sigset_t = std::mem::zeroed();
            signals::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut now);
            assert_eq!(libc::sigismember(&now, libc::SIGSEGV), 0, "SIGSEGV stays deliverable");
            assert_eq!(libc::sigismember(&now, libc::SIGUSR1), 1);
            // Were SIGSEGV blocked, the kernel would end the test process here.
            (address as *mut u8).write_volatile(1);
        }
    })
    .join()
    .expect("the thread wrote");
    assert_eq!(written_in(&memory), vec![0]);
}

#[test]
fn writes_racing_with_watches_that_start_and_end_never_end_the_program() {
    let _alone = alone();
    let memory = Pages::new(8);
    let (start, len) = (memory.start, memory.len);
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut round = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for page in 0..len / PAGE {
                    // SAFETY: inside the mapping, which outlives the thread.
                    unsafe { ((start + page * PAGE + round % PAGE) as *mut u8).write_volatile(round as u8) };
                }
                round += 1;
            }
        })
    };
    // A fault taken just before a watch ends reaches the handler after the page is no longer
    // watched: the write must go on, and the shim's handler must stay in place.
    for _ in 0..3000 {
        assert!(watch(start, len));
        std::hint::spin_loop();
        unwatch(start, len);
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("the writer never faults fatally");
    let _ = written_in(&memory);
    assert!(watch(start, len));
    // SAFETY: inside the mapping.
    unsafe { memory.byte(2 * PAGE).write_volatile(1) };
    assert_eq!(written_in(&memory), vec![2]);
}

#[test]
fn a_fault_that_is_not_the_shim_s_ends_the_program_saying_where() {
    let _alone = alone();
    let memory = Pages::new(1);
    assert!(watch(memory.start, memory.len));
    // SAFETY: a fresh read-only page, and a pipe for the child's standard error.
    let (read_only, pipe) = unsafe {
        let page = libc::mmap(std::ptr::null_mut(), PAGE as usize, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        let mut pipe = [0; 2];
        assert_eq!(libc::pipe(pipe.as_mut_ptr()), 0);
        (page as u64, pipe)
    };
    // SAFETY: the child only writes (a fault ends it); the parent waits for it.
    let child = unsafe { libc::fork() };
    if child == 0 {
        // SAFETY: as above.
        unsafe {
            libc::dup2(pipe[1], libc::STDERR_FILENO);
            (read_only as *mut u8).write_volatile(1);
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: our child and our pipe.
    let said = unsafe {
        libc::close(pipe[1]);
        libc::waitpid(child, &mut status, 0);
        let mut said = vec![0u8; 256];
        let read = libc::read(pipe[0], said.as_mut_ptr().cast(), said.len());
        libc::close(pipe[0]);
        said.truncate(read.max(0) as usize);
        String::from_utf8_lossy(&said).into_owned()
    };
    assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSEGV, "status {status:#x}, {said}");
    assert!(said.starts_with(&format!("reprise: the program faults at {read_only:#x} (SIGSEGV, si_code 2, instruction 0x")), "{said}");
    assert!(said.ends_with("not a page the shim watches\n"), "{said}");
}
