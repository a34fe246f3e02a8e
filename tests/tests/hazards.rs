//! Hazards: two queues write one buffer with nothing ordering them (`tests/opencl/racy_queues.c`).
//! `replayer validate` names the pair, and the replay's comparison reports it beside its verdict;
//! a program whose writes are ordered (`in_order_chain`) has none.

use end_to_end::device::Device;
use end_to_end::program::Program;
use end_to_end::replay::{path_str, replay_compared, run_replayer, Mode};

const RACE: &str = "nodes 0 and 1 are not ordered and both write memory 0";

#[test]
fn unordered_writes_to_one_buffer_are_reported_as_a_hazard() {
    let program = Program::opencl_c("racy_queues");
    for device in std::iter::once(Device::pocl()).chain(Device::intel()) {
        let trace = program.record(&device);
        let validated = run_replayer(&["validate", path_str(&trace)], None);
        let text = String::from_utf8_lossy(&validated.stdout);
        assert!(validated.status.success(), "{} {text}", device.name());
        assert!(text.contains(&format!("hazard: {RACE}")) && text.contains("1 hazard(s)"), "{}: {text}", device.name());
        for mode in Mode::BOTH {
            let report = replay_compared(&trace, &device, mode, &[]);
            assert_eq!(report["comparison"]["hazard_count"], 1, "{report:#}");
            assert_eq!(report["comparison"]["hazards"][0], RACE, "{report:#}");
        }
    }
}

#[test]
fn ordered_writes_are_no_hazard() {
    let program = Program::opencl_c("in_order_chain");
    let trace = program.record(&Device::pocl());
    let validated = run_replayer(&["validate", path_str(&trace)], None);
    let text = String::from_utf8_lossy(&validated.stdout);
    assert!(validated.status.success() && !text.contains("hazard"), "{text}");
}
