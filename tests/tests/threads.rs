//! Multi-threaded OpenCL programs: each thread's synchronizations close its own work, so every
//! recording replays identically in graph and eager mode, with every result the threads read
//! back compared, and the final contents of the buffers they release. Thread interleavings differ from run to run: twenty recordings per program
//! and device.

use end_to_end::device::Device;
use end_to_end::program::Program;
use end_to_end::replay::{replay_compared, Mode};

const RECORDINGS: usize = 20;

/// Records `name` `RECORDINGS` times on each device and replays every trace both ways; each
/// replay compares `reads` results the threads received and the final contents of the `released`
/// buffers the capture wrote (kernels are taken to write every buffer they take).
fn every_recording_replays(name: &str, reads: u64, released: u64) {
    let program = Program::opencl_c(name);
    for device in std::iter::once(Device::pocl()).chain(Device::intel()) {
        for recording in 0..RECORDINGS {
            let trace = program.record(&device);
            for mode in Mode::BOTH {
                let report = replay_compared(&trace, &device, mode, &[]);
                let compared = &report["comparison"]["compared"];
                assert_eq!(compared.as_u64(), Some(reads + released), "recording {recording} on {}, {}: {report:#}", device.name(), mode.name());
            }
        }
    }
}

/// Eight threads, each with its own queue and buffer: 20 blocking reads each; the eight buffers
/// and the input they share are released.
#[test]
fn threads_with_their_own_queues() {
    every_recording_replays("threads_own_queues", 8 * 20, 8 + 1);
}

/// Four threads sharing one queue under a lock: 60 blocking reads each; their four buffers are
/// released.
#[test]
fn threads_sharing_a_queue_under_a_lock() {
    every_recording_replays("threads_shared_queue", 4 * 60, 4);
}

/// Four threads sharing one queue with no lock, each waiting for it with clFinish while the others
/// enqueue to it: 40 non-blocking reads each, every one closed by a wait that began after it was
/// enqueued; their four buffers are released.
#[test]
fn threads_finishing_a_queue_others_enqueue_to() {
    every_recording_replays("threads_finish_shared_queue", 4 * 40, 4);
}
