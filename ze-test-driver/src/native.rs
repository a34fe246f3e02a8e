//! The double's native binaries (`zeModuleGetNativeBinary`, `ZE_MODULE_FORMAT_NATIVE`): the
//! OpenCL runtime's program binary, preceded by what OpenCL does not keep in it, each kernel's
//! argument kinds.
//!
//! Layout: `MAGIC`, then a little-endian u32 kernel count; per kernel a u32 name length, the name,
//! a u32 argument count and one byte per argument (`ArgKind`); then the OpenCL binary.

use crate::spirv::ArgKind;
use std::collections::BTreeMap;

const MAGIC: &[u8; 8] = b"RPRZETB1";

/// `ze_device_module_properties_t::nativeKernelSupported`: binaries of this format.
pub const FORMAT_ID: [u8; 16] = *b"RPRZETB1-intelcl";

/// Each kernel's argument kinds, by kernel name.
pub type Kernels = BTreeMap<String, Vec<ArgKind>>;

pub fn encode(kernels: &Kernels, opencl_binary: &[u8]) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend((kernels.len() as u32).to_le_bytes());
    for (name, args) in kernels {
        bytes.extend((name.len() as u32).to_le_bytes());
        bytes.extend(name.as_bytes());
        bytes.extend((args.len() as u32).to_le_bytes());
        bytes.extend(args.iter().map(|kind| *kind as u8));
    }
    bytes.extend(opencl_binary);
    bytes
}

/// Reads a binary from its start.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, count: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.0.split_at_checked(count)?;
        self.0 = rest;
        Some(taken)
    }

    fn word(&mut self) -> Option<usize> {
        let bytes = self.take(4)?;
        Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize)
    }
}

/// The kernels' argument kinds and the OpenCL binary; `None` for anything else.
pub fn decode(bytes: &[u8]) -> Option<(Kernels, &[u8])> {
    let mut cursor = Cursor(bytes.strip_prefix(MAGIC)?);
    let count = cursor.word()?;
    let mut kernels = BTreeMap::new();
    for _ in 0..count {
        let length = cursor.word()?;
        let name = String::from_utf8(cursor.take(length)?.to_vec()).ok()?;
        let arg_count = cursor.word()?;
        let args = cursor.take(arg_count)?.iter().map(|&byte| ArgKind::from_byte(byte)).collect::<Option<Vec<_>>>()?;
        kernels.insert(name, args);
    }
    Some((kernels, cursor.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_decodes_to_what_was_encoded() {
        let kernels = BTreeMap::from([("add".to_string(), vec![ArgKind::Global, ArgKind::Value]), ("sum".to_string(), vec![ArgKind::Local])]);
        let encoded = encode(&kernels, b"\x7fELF opencl");
        assert_eq!(decode(&encoded), Some((kernels, &b"\x7fELF opencl"[..])));
    }

    #[test]
    fn other_bytes_and_truncated_binaries_are_refused() {
        assert_eq!(decode(b"\x03\x02\x23\x07 spir-v"), None);
        let encoded = encode(&BTreeMap::from([("k".to_string(), vec![ArgKind::Global])]), b"");
        assert_eq!(decode(&encoded[..encoded.len() - 1]), None);
    }
}
