//! Arrays and texture objects translated without a GPU: a copy into an array names the array's
//! memory at its packed byte positions, and a launch passing a texture object's handle binds the
//! object (and uses the memory it reads), unless the kernel declares the parameter otherwise.

use super::arrays::{Arrays, TrackedArray};
use super::launches::{kernel_accesses, kernel_command, Decoded};
use super::params::{self, Value};
use super::rect::{Memcpy3D, RectCopy, CU_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_HOST};
use super::tests::{recorder, CollectingSink, DEVICE, FUNCTION, X};
use super::textures;
use crate::recorder::{HostWrites, MemDesc, MemShape, Recorder, TextureDesc};
use trace_format::{Arg, Command, Copy, Extent, ImageLayout, Launch, MemKind, Place, Record, Texture, TextureKind, TextureResource};

const ARRAY_HANDLE: usize = 0x5555_0000;
const ARRAY_ADDRESS: u64 = 0xf000_0100_0000_0000;

/// A 16 x 8 array of 4-byte texels, 3 layers, tracked as the shim tracks one.
fn tracked_array(recorder: &mut Recorder) -> Arrays {
    let layout = ImageLayout { width: 16, height: 8, depth: 3, texel_bytes: 4, format: vec![16, 8, 3, 0x20, 1, 1] };
    let desc = MemDesc {
        shape: MemShape::Whole(MemKind::Image(layout.clone())),
        size: layout.bytes(),
        address: ARRAY_ADDRESS,
        flags: 0,
        device: Some(DEVICE),
        addressable: true,
        host_writes: HostWrites::None,
    };
    recorder.memory_created(ARRAY_ADDRESS, desc);
    let mut arrays = Arrays::default();
    arrays.insert(ARRAY_HANDLE, TrackedArray { handle: ARRAY_HANDLE, address: ARRAY_ADDRESS, layout });
    arrays
}

#[test]
fn a_copy_into_an_array_names_its_packed_bytes() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    let arrays = tracked_array(&mut recorder);
    let host = vec![7u8; 4 * 20 * 5];
    // 5 texels wide, 5 rows, from texel (2, 1) of layer 2, out of host rows of 20 texels.
    let copy = Memcpy3D {
        src_memory_type: CU_MEMORYTYPE_HOST,
        src_host: host.as_ptr() as usize,
        src_pitch: 80,
        src_height: 5,
        dst_memory_type: CU_MEMORYTYPE_ARRAY,
        dst_array: ARRAY_HANDLE,
        dst_x_bytes: 8,
        dst_y: 1,
        dst_z: 2,
        dst_pitch: 4096,
        width_bytes: 20,
        height: 5,
        depth: 1,
        ..Memcpy3D::default()
    };
    let rect = copy.rect(&arrays, &recorder).expect("a tracked array is an end");
    let Ok(Command::Copy(Copy { dst, extent, .. })) = rect.command(&mut recorder) else { panic!("a copy") };
    let mem = recorder.mem_id(ARRAY_ADDRESS).expect("tracked");
    assert_eq!(dst, Place::Memory { mem, offset: 0 });
    let Extent::Rect { dst_origin, dst_row_pitch, dst_slice_pitch, region, .. } = extent else { panic!("a rectangle") };
    assert_eq!((dst_origin, region), ([8, 1, 2], [20, 5, 1]));
    // The description's pitch is not the array's: rows and slices are the packed layout's.
    assert_eq!((dst_row_pitch, dst_slice_pitch), (64, 512));
    let untracked = Memcpy3D { dst_array: ARRAY_HANDLE + 1, ..copy };
    assert!(untracked.rect(&arrays, &recorder).is_none(), "an array the shim did not see created is no end");
}

/// A launch of a kernel taking (a texture handle, a pointer) whose handle is `handle`.
fn launch_with(recorder: &mut Recorder, handle: u64) -> (Decoded, Command) {
    let arguments = vec![handle.to_ne_bytes().to_vec(), X.to_ne_bytes().to_vec()];
    let values = params::decode(&arguments, |address| recorder.locate(address), |index, word| textures::parameter(recorder, FUNCTION, index, word));
    let decoded = Decoded { layout: vec![(0, 8), (8, 8)].into(), values, variables: Vec::new() };
    let grid = Launch::Grid { grid: [1; 3], block: [1; 3], shared_bytes: 0, cluster: None, cooperative: false };
    let command = kernel_command(recorder, FUNCTION, decoded.clone(), grid).expect("recorded");
    (decoded, command)
}

#[test]
fn a_texture_handle_binds_its_object_and_uses_what_it_reads() {
    let sink = CollectingSink::default();
    let mut recorder = recorder(&sink);
    tracked_array(&mut recorder);
    let description = vec![9u8; 248];
    recorder.texture_created(3, TextureDesc { kind: TextureKind::Sampled, resource: Some((ARRAY_ADDRESS, 0)), description: description.clone() });
    let (decoded, command) = launch_with(&mut recorder, 3);
    assert_eq!(decoded.values[0], Value::Texture { handle: 3, resource: Some(ARRAY_ADDRESS) });
    let Command::Kernel(launch) = command else { panic!("a launch") };
    assert!(matches!(launch.args[0], Arg::Texture(_)), "{:?}", launch.args);
    assert!(kernel_accesses(&decoded).iter().any(|access| access.mem == ARRAY_ADDRESS), "the array is used");
    let mem = recorder.mem_id(ARRAY_ADDRESS).expect("tracked");
    let records = sink.0.lock().unwrap().0.clone();
    let texture = Texture { kind: TextureKind::Sampled, resource: Some(TextureResource { mem, offset: 0 }), description };
    assert!(records.contains(&Record::Texture(texture)), "the object is written once a launch passes it");

    // A handle value that is no live object stays a value; so does one a kernel declares as
    // another type.
    recorder.texture_released(3);
    let (_, command) = launch_with(&mut recorder, 3);
    let Command::Kernel(launch) = command else { panic!("a launch") };
    assert_eq!(launch.args[0], Arg::Value(3u64.to_ne_bytes().to_vec()));
    recorder.texture_created(4, TextureDesc { kind: TextureKind::Surface, resource: Some((ARRAY_ADDRESS, 0)), description: vec![0; 144] });
    recorder.kernel_created(FUNCTION, 0x4000_0000, "_Z4sizemPi", vec!["unsigned long".into(), "int*".into()]);
    let (decoded, _) = launch_with(&mut recorder, 4);
    assert_eq!(decoded.values[0], Value::Bytes(4u64.to_ne_bytes().to_vec()));
}
