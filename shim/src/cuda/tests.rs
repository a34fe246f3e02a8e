//! The CUDA module's translation functions (stream descriptions, allocations, copies, memsets,
//! launches with decoded parameters) driving a real recorder through a scripted call sequence,
//! with fake handles and `FakeDeviceMemory`, a test double for the device reads the driver would
//! do (no GPU here). What needs libcuda is checked on the GPU machine.

use super::copies::{copy_command, fill_command, End};
use super::launches::{kernel_accesses, kernel_command, Decoded};
use super::memory::allocation;
use super::params::{self, Value};
use super::procaddress::{hook_for, variant_of};
use super::rect::fill_2d_command;
use super::state::Layout;
use super::streams::{describe, per_thread_key, stream_key, LEGACY};
use crate::config::{Capture, Verify};
use crate::interpose::Hook;
use crate::recorder::{Access, Key, MemoryAccess, Order, Recorder, Sink, Submission, SyncScope};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use trace_format::{
    Arg, BlobId, Command, EmbeddedPointer, Edge, EdgeKind, Header, ImageKind, Launch, MemState, Param, ParamKind, Place, PreparedBlob, Record,
};
use EdgeKind::{DefaultStream, Event, InOrder};

/// Records and blobs as a recorder wrote them.
pub(super) type Written = (Vec<Record>, HashMap<BlobId, Vec<u8>>);

#[derive(Clone, Default)]
pub(super) struct CollectingSink(pub(super) Arc<Mutex<Written>>);

impl Sink for CollectingSink {
    fn record(&mut self, record: Record) {
        self.0.lock().unwrap().0.push(record);
    }
    fn records(&mut self, records: Vec<Record>) {
        self.0.lock().unwrap().0.extend(records);
    }
    fn blob(&mut self, bytes: Vec<u8>) -> BlobId {
        let id = BlobId::of(&bytes);
        self.0.lock().unwrap().1.insert(id, bytes);
        id
    }
    fn prepared_blob(&mut self, blob: PreparedBlob) -> BlobId {
        self.0.lock().unwrap().1.insert(blob.id, blob.to_raw().expect("a blob that decompresses"));
        blob.id
    }
    fn flush(&mut self) {}
}

/// Test double for device memory: contents by allocation address.
#[derive(Default)]
pub(super) struct FakeDeviceMemory {
    pub(super) contents: RefCell<HashMap<Key, Vec<u8>>>,
}

impl MemoryAccess for FakeDeviceMemory {
    fn drain(&self) {}
    fn read(&self, mem: Key, size: u64) -> Option<Vec<u8>> {
        let contents = self.contents.borrow().get(&mem).cloned()?;
        assert_eq!(contents.len() as u64, size);
        Some(contents)
    }
}

const CONTEXT: Key = 0xc0ffee00;
pub(super) const DEVICE: Key = 0;
const BLOCKING: Key = 0x5000_1000;
const NON_BLOCKING: Key = 0x5000_2000;
const EVENT: Key = 0x6000_0000;
const MODULE: Key = 0x4000_0000;
pub(super) const FUNCTION: Key = 0x4000_1000;
pub(super) const X: u64 = 0x7f00_0000_0000;
pub(super) const Y: u64 = 0x7f00_0000_1000;
pub(super) const SIZE: u64 = 256;

pub(super) fn recorder(sink: &CollectingSink) -> Recorder {
    let header = Header { api: trace_format::Api::Cuda, producer: "test".into(), command_line: vec![], process_id: 1, started_unix_s: 0 };
    let mut recorder = Recorder::new(header, Capture::All, Verify::EveryWindows(1), Box::new(sink.clone()));
    recorder.device_seen(DEVICE, trace_format::Device { name: "fake".into(), vendor: "NVIDIA".into(), driver_version: "13000".into(), properties: Default::default() });
    for (queue, flags) in [(LEGACY, 0), (BLOCKING, 0), (NON_BLOCKING, 1)] {
        recorder.queue_created(queue, describe(queue, flags, 0, CONTEXT, Some(DEVICE)));
    }
    for address in [X, Y] {
        recorder.memory_created(address, allocation(address, SIZE, Some(DEVICE)));
    }
    recorder.program_created(MODULE, vec![(ImageKind::Ptx, b".version 9.0".to_vec())]);
    recorder.kernel_created(FUNCTION, MODULE, "_Z4stepPii", Vec::new());
    recorder
}

/// A launch of `FUNCTION(int *data, int n)` as the program packs it: a pointer and an int.
pub(super) fn launch_arguments(pointer: u64, n: i32) -> (Layout, Vec<Vec<u8>>) {
    (vec![(0, 8), (8, 4)].into(), vec![pointer.to_ne_bytes().to_vec(), n.to_ne_bytes().to_vec()])
}

fn decoded(recorder: &Recorder, pointer: u64, n: i32) -> Decoded {
    let (layout, arguments) = launch_arguments(pointer, n);
    let values = params::decode(&arguments, |address| recorder.locate(address), |_, _| None);
    Decoded { layout, values, variables: Vec::new() }
}

pub(super) const GRID: Launch = Launch::Grid { grid: [4, 1, 1], block: [64, 1, 1], shared_bytes: 0, cluster: None, cooperative: false };

/// Submits a command to `queue` as `commands::enqueue` does once the real call succeeded.
pub(super) fn submit(recorder: &mut Recorder, device: &FakeDeviceMemory, queue: Key, accesses: &[Access], build: impl FnOnce(&mut Recorder) -> Command) {
    let prepared = recorder.prepare(accesses.to_vec(), device);
    let submission = Submission { call: "test", queue: Some(queue), order: Order::Command, waits: &[], signals: None, received: None, host_ordered: false };
    recorder.submit(prepared, submission, build);
}

pub(super) fn write(mem: Key) -> Access {
    Access { mem, write: true, overwrites: false }
}

#[test]
fn parameters_decode_with_pointers_relocated_into_their_allocation() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let decoded = decoded(&recorder, X + 16, 5);
    assert_eq!(decoded.values, vec![Value::Memory { mem: X, offset: 16 }, Value::Bytes(5i32.to_ne_bytes().to_vec())]);
    assert_eq!(kernel_accesses(&decoded), vec![write(X)]);
    let Command::Kernel(launch) = kernel_command(&mut recorder, FUNCTION, decoded, GRID).unwrap() else { panic!("not a kernel") };
    assert_eq!(launch.args, vec![Arg::Memory { mem: trace_format::MemId(0), offset: 16 }, Arg::Value(5i32.to_ne_bytes().to_vec())]);
    let kernel = sink.0.lock().unwrap().0.iter().find_map(|record| match record { Record::Kernel(kernel) => Some(kernel.clone()), _ => None });
    let kernel = kernel.expect("the kernel's record is written");
    assert_eq!(kernel.name, "_Z4stepPii");
    assert_eq!(kernel.params, vec![Param { offset: 0, size: 8, kind: ParamKind::Memory }, Param { offset: 8, size: 4, kind: ParamKind::Value }]);

    // An end pointer still names its allocation; an address outside every one is a value.
    let values = params::decode(&[(Y + SIZE).to_ne_bytes().to_vec(), 0x1234u64.to_ne_bytes().to_vec()], |a| recorder.locate(a), |_, _| None);
    assert_eq!(values, vec![Value::Memory { mem: Y, offset: SIZE }, Value::Bytes(0x1234u64.to_ne_bytes().to_vec())]);
}

/// The kernel attributes the recording wrote, as (kernel, attribute, value).
fn kernel_attributes(sink: &CollectingSink) -> Vec<(u32, u32, i64)> {
    let records = &sink.0.lock().unwrap().0;
    records.iter().filter_map(|record| match record { Record::KernelAttribute(set) => Some((set.kernel.0, set.attribute, set.value)), _ => None }).collect()
}

#[test]
fn attributes_set_on_a_function_are_recorded_for_its_kernel_before_and_after_its_first_launch() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // Non-portable cluster sizes allowed, and a scheduling policy, before the first launch.
    recorder.kernel_attribute_set(FUNCTION, 14, 1);
    recorder.kernel_attribute_set(FUNCTION, 15, 1);
    assert_eq!(kernel_attributes(&sink), [], "no trace kernel yet");
    let decoded = decoded(&recorder, X, 5);
    kernel_command(&mut recorder, FUNCTION, decoded, GRID).unwrap();
    assert_eq!(kernel_attributes(&sink), [(0, 14, 1), (0, 15, 1)]);
    // Set again to the same value: nothing new; to another: written at once.
    recorder.kernel_attribute_set(FUNCTION, 14, 1);
    recorder.kernel_attribute_set(FUNCTION, 8, 98_304);
    assert_eq!(kernel_attributes(&sink), [(0, 14, 1), (0, 15, 1), (0, 8, 98_304)]);
    // A function the recorder does not know is not recorded.
    recorder.kernel_attribute_set(FUNCTION + 8, 14, 1);
    assert_eq!(kernel_attributes(&sink).len(), 3);
}

#[test]
fn addresses_inside_a_structure_passed_by_value_are_relocated_too() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    // struct { int64 n; float *x; float *y; int32 k; } as PyTorch's and cuBLAS's kernels take
    // their pointers: an unrelated word, two tracked addresses, a tail shorter than a word.
    let structure = [7u64.to_ne_bytes().as_slice(), &(Y + 8).to_ne_bytes(), &X.to_ne_bytes(), &3i32.to_ne_bytes()].concat();
    let values = params::decode(std::slice::from_ref(&structure), |a| recorder.locate(a), |_, _| None);
    let decoded = Decoded { layout: vec![(0, structure.len() as u32)].into(), values, variables: Vec::new() };
    let embedded = vec![params::Embedded { at: 8, mem: Y, offset: 8 }, params::Embedded { at: 16, mem: X, offset: 0 }];
    assert_eq!(decoded.values, vec![Value::BytesWithPointers { bytes: structure.clone(), pointers: embedded }]);
    assert_eq!(kernel_accesses(&decoded), vec![write(Y), write(X)]);
    let Command::Kernel(launch) = kernel_command(&mut recorder, FUNCTION, decoded, GRID).unwrap() else { panic!("not a kernel") };
    let (x, y) = (recorder.mem_id(X).unwrap(), recorder.mem_id(Y).unwrap());
    let pointers = vec![EmbeddedPointer { at: 8, mem: y, offset: 8 }, EmbeddedPointer { at: 16, mem: x, offset: 0 }];
    assert_eq!(launch.args, vec![Arg::ValueWithPointers { bytes: structure, pointers }]);
    // Zeros and words outside every allocation stay plain bytes.
    let plain = [0u64.to_ne_bytes(), 0x1234u64.to_ne_bytes()].concat();
    assert_eq!(params::decode(std::slice::from_ref(&plain), |a| recorder.locate(a), |_, _| None), vec![Value::Bytes(plain)]);
}

/// `CU_LAUNCH_PARAM_BUFFER_POINTER` and `CU_LAUNCH_PARAM_BUFFER_SIZE`, as `extra` names them.
const BUFFER_POINTER: usize = 1;
const BUFFER_SIZE: usize = 2;
/// `CU_STREAM_PER_THREAD`.
const PER_THREAD: u64 = 2;

#[test]
fn a_2d_memset_covers_its_rows_up_to_the_last_element() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let Command::Fill(fill) = fill_2d_command(&mut recorder, Y + 4, 64, &[1, 2], 3, 2).unwrap() else { panic!("not a fill") };
    assert_eq!((fill.mem.0, fill.offset, fill.bytes, fill.rows), (0, 4, 64 + 6, Some([64, 3, 2])));
    assert!(fill_2d_command(&mut recorder, 0x10, 64, &[1], 3, 2).is_err(), "untracked memory is refused");
}

#[test]
fn arguments_are_read_from_parameter_pointers_and_from_a_packed_buffer() {
    let layout = vec![(0, 8), (8, 4), (16, 8)];
    let (mut a, mut b, mut c) = (X, 42i32, 9u64);
    let mut pointers: Vec<*mut c_void> = vec![(&raw mut a).cast(), (&raw mut b).cast(), (&raw mut c).cast()];
    let expected = vec![X.to_ne_bytes().to_vec(), 42i32.to_ne_bytes().to_vec(), 9u64.to_ne_bytes().to_vec()];
    let expected: Vec<&[u8]> = expected.iter().map(Vec::as_slice).collect();
    let read = unsafe { params::arguments(&layout, pointers.as_mut_ptr(), std::ptr::null_mut()) };
    assert_eq!(read.as_ref(), Some(&expected));

    let mut packed = [X.to_ne_bytes().to_vec(), 42i32.to_ne_bytes().to_vec(), vec![0; 4], 9u64.to_ne_bytes().to_vec()].concat();
    let mut length = packed.len();
    let mut extra: Vec<*mut c_void> = vec![BUFFER_POINTER as *mut c_void, packed.as_mut_ptr().cast(), BUFFER_SIZE as *mut c_void, (&raw mut length).cast(), std::ptr::null_mut()];
    let read = unsafe { params::arguments(&layout, std::ptr::null_mut(), extra.as_mut_ptr()) };
    assert_eq!(read, Some(expected));
    // A buffer shorter than the layout says is refused, not read past.
    unsafe { *extra[3].cast::<usize>() = 12 };
    assert_eq!(unsafe { params::arguments(&layout, std::ptr::null_mut(), extra.as_mut_ptr()) }, None);
}

/// Legacy default stream, a blocking and a non-blocking stream, and an event join: the edges
/// CUDA's ordering rules imply, and the segment's memory states.
#[test]
fn edges_follow_the_default_stream_rules_and_event_joins() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let device = FakeDeviceMemory::default();
    device.contents.borrow_mut().extend([(X, vec![1; SIZE as usize]), (Y, vec![2; SIZE as usize])]);

    // n0: memset of X on the blocking stream.
    submit(&mut recorder, &device, BLOCKING, &[write(X)], |r| fill_command(r, X, &7u32.to_ne_bytes(), 64).unwrap());
    // n1: a kernel on the legacy stream waits for the blocking stream.
    let launch = decoded(&recorder, X, 64);
    submit(&mut recorder, &device, LEGACY, &kernel_accesses(&launch), |r| kernel_command(r, FUNCTION, launch.clone(), GRID).unwrap());
    // n2: a copy X -> Y on the non-blocking stream waits for nothing; an event marks it.
    submit(&mut recorder, &device, NON_BLOCKING, &[Access { mem: X, write: false, overwrites: false }, write(Y)], |r| {
        copy_command(r, End::Device(X), End::Device(Y), SIZE as usize).unwrap()
    });
    recorder.record_event(EVENT, NON_BLOCKING);
    recorder.queue_waits(BLOCKING, EVENT);
    // n3: a write into Y on the blocking stream: after n0 (in order), n2 (event), n1 (legacy).
    let host = [9u8; 16];
    submit(&mut recorder, &device, BLOCKING, &[write(Y)], |r| copy_command(r, End::Host(host.as_ptr() as u64), End::Device(Y + 32), 16).unwrap());
    // n4: the non-blocking stream ignores the legacy stream.
    submit(&mut recorder, &device, NON_BLOCKING, &[write(Y)], |r| fill_command(r, Y, &[0xff], 8).unwrap());
    // n5: the legacy stream waits for the blocking stream's newest work, not the non-blocking one.
    submit(&mut recorder, &device, LEGACY, &kernel_accesses(&launch), |r| kernel_command(r, FUNCTION, launch.clone(), GRID).unwrap());
    // A per-thread default stream is blocking: it waits for the legacy stream.
    let per_thread = per_thread_key(77);
    recorder.queue_created(per_thread, describe(per_thread, 0, 0, CONTEXT, Some(DEVICE)));
    submit(&mut recorder, &device, per_thread, &[write(X)], |r| fill_command(r, X, &[1, 0], 4).unwrap());
    device.contents.borrow_mut().insert(X, vec![3; SIZE as usize]);
    recorder.host_sync("cuStreamSynchronize", SyncScope::Everything, &device);

    let (records, blobs) = sink.0.lock().unwrap().clone();
    let edges: Vec<(u32, u32, EdgeKind)> =
        records.iter().filter_map(|record| match record { Record::Edge(Edge { from, to, kind }) => Some((from.0, to.0, *kind)), _ => None }).collect();
    // n2 reads X, which n1 wrote, and n4 writes Y, which n3 wrote, with nothing ordering them:
    // asynchronous calls the program let race, so no memory edge orders them (those come from
    // calls without a stream, `memory_order_program`).
    assert_eq!(
        edges,
        vec![
            (0, 1, DefaultStream),
            (0, 3, InOrder),
            (1, 3, DefaultStream),
            (2, 3, Event),
            (2, 4, InOrder),
            (1, 5, InOrder),
            (3, 5, DefaultStream),
            (5, 6, DefaultStream)
        ]
    );
    let copy = records.iter().find_map(|record| match record {
        Record::Node(node) if node.queue.is_some() && matches!(node.command, Command::Copy(ref copy) if matches!(copy.src, Place::Host { .. })) => Some(node.clone()),
        _ => None,
    });
    let Some(Command::Copy(copy)) = copy.map(|node| node.command) else { panic!("the host-to-device copy is recorded") };
    assert_eq!(copy.dst, Place::Memory { mem: trace_format::MemId(1), offset: 32 });
    let Place::Host { data: Some(blob) } = copy.src else { panic!("the copy keeps the host data") };
    assert_eq!(blobs[&blob], host);
    // Initial contents as first used, final contents of what the window wrote.
    let initial: Vec<Vec<u8>> = records.iter().filter_map(|record| match record { Record::InitialState { state, .. } => Some(blobs[&state.blob].clone()), _ => None }).collect();
    assert_eq!(initial, vec![vec![1; SIZE as usize], vec![2; SIZE as usize]]);
    let Some(Record::SegmentEnd { ended_by, expected, .. }) = records.last() else { panic!("the segment ends") };
    assert_eq!(ended_by, "cuStreamSynchronize");
    let expected: Vec<(u32, Vec<u8>)> = expected.iter().map(|MemState { mem, blob }| (mem.0, blobs[blob].clone())).collect();
    assert_eq!(expected, vec![(0, vec![3; SIZE as usize]), (1, vec![2; SIZE as usize])]);
}

#[test]
fn stream_zero_means_the_legacy_stream_except_in_per_thread_variants() {
    let thread = unsafe { libc::gettid() } as u64;
    assert_eq!(stream_key(std::ptr::null_mut(), "cuLaunchKernel"), LEGACY);
    assert_eq!(stream_key(LEGACY as *mut c_void, "cuLaunchKernel_ptsz"), LEGACY);
    assert_eq!(stream_key(std::ptr::null_mut(), "cuLaunchKernel_ptsz"), per_thread_key(thread));
    assert_eq!(stream_key(std::ptr::null_mut(), "cuMemcpyHtoD_v2_ptds"), per_thread_key(thread));
    assert_eq!(stream_key(PER_THREAD as *mut c_void, "cuLaunchKernel"), per_thread_key(thread));
    assert_eq!(stream_key(BLOCKING as *mut c_void, "cuLaunchKernel_ptsz"), BLOCKING);
    assert_ne!(per_thread_key(thread) % 8, 0, "a per-thread key is never an aligned handle");
    use crate::recorder::QueueSync;
    assert_eq!(describe(LEGACY, 0, 0, CONTEXT, None).sync, QueueSync::LegacyDefault);
    assert_eq!(describe(BLOCKING, 0, 0, CONTEXT, None).sync, QueueSync::Blocking);
    assert_eq!(describe(NON_BLOCKING, 1, -1, CONTEXT, None).sync, QueueSync::Independent);
    assert_eq!(describe(per_thread_key(thread), 0, 0, CONTEXT, None).sync, QueueSync::Blocking);
}

/// `cuGetProcAddress` hands out the hook whose real function is the pointer the driver answered:
/// `fake_driver` is a test double for where each variant lives in libcuda.
#[test]
fn get_proc_address_hands_out_the_hook_of_the_variant_the_driver_chose() {
    let fake_driver = |hook: &Hook| match hook.name.to_bytes() {
        b"cuLaunchKernel" => Some(0x1000),
        b"cuLaunchKernel_ptsz" => Some(0x2000),
        b"cuMemcpyHtoD_v2" => Some(0x3000),
        b"cuMemcpyHtoD_v2_ptds" => Some(0x4000),
        b"cuLaunchKernelEx" => Some(0x5000),
        b"cuGraphInstantiateWithFlags" => Some(0x6000),
        _ => None,
    };
    let name = |hook: Option<&Hook>| hook.map(|hook| hook.name.to_str().unwrap().to_string());
    assert_eq!(name(hook_for(b"cuLaunchKernel", 0x1000, fake_driver)).as_deref(), Some("cuLaunchKernel"));
    assert_eq!(name(hook_for(b"cuLaunchKernel", 0x2000, fake_driver)).as_deref(), Some("cuLaunchKernel_ptsz"));
    assert_eq!(name(hook_for(b"cuMemcpyHtoD", 0x3000, fake_driver)).as_deref(), Some("cuMemcpyHtoD_v2"));
    assert_eq!(name(hook_for(b"cuMemcpyHtoD", 0x4000, fake_driver)).as_deref(), Some("cuMemcpyHtoD_v2_ptds"));
    // Another function's pointer, or one the shim does not know, is left as the driver gave it.
    assert_eq!(name(hook_for(b"cuLaunchKernel", 0x5000, fake_driver)), None);
    assert_eq!(name(hook_for(b"cuLaunchKernel", 0x9999, fake_driver)), None);
    // The CUDA 12+ version of `cuGraphInstantiate` is `cuGraphInstantiateWithFlags`.
    assert_eq!(name(hook_for(b"cuGraphInstantiate", 0x6000, fake_driver)).as_deref(), Some("cuGraphInstantiateWithFlags"));
    assert!(variant_of(b"cuMemsetD8_v2", b"cuMemsetD8"));
    assert!(!variant_of(b"cuMemsetD8Async", b"cuMemsetD8"));
    assert!(!variant_of(b"cuEventRecordWithFlags", b"cuEventRecord"));
}
