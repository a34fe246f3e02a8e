//! What the driver must know of a SPIR-V module that OpenCL does not tell for IL programs
//! (`clGetKernelArgInfo` is unavailable there): which kernel arguments are pointers to global or
//! local memory, and the size of each specialization constant.

use std::collections::BTreeMap;

/// How a kernel argument is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ArgKind {
    /// Bytes passed by value (structures passed by value arrive as `Function` pointers).
    Value = 0,
    /// A pointer to global or constant memory: a USM pointer.
    Global = 1,
    /// Local memory sized at launch.
    Local = 2,
}

impl ArgKind {
    pub fn from_byte(byte: u8) -> Option<ArgKind> {
        [ArgKind::Value, ArgKind::Global, ArgKind::Local].into_iter().find(|kind| *kind as u8 == byte)
    }
}

#[derive(Debug, Default, PartialEq)]
pub struct Module {
    /// Each kernel's argument kinds, by kernel name.
    pub kernels: BTreeMap<String, Vec<ArgKind>>,
    /// Bytes of each specialization constant, by its `SpecId`.
    pub spec_constants: BTreeMap<u32, usize>,
}

const MAGIC: u32 = 0x0723_0203;
const OP_ENTRY_POINT: u16 = 15;
const OP_TYPE_BOOL: u16 = 20;
const OP_TYPE_INT: u16 = 21;
const OP_TYPE_FLOAT: u16 = 22;
const OP_TYPE_POINTER: u16 = 32;
const OP_SPEC_CONSTANT_TRUE: u16 = 48;
const OP_SPEC_CONSTANT_FALSE: u16 = 49;
const OP_SPEC_CONSTANT: u16 = 50;
const OP_FUNCTION: u16 = 54;
const OP_FUNCTION_PARAMETER: u16 = 55;
const OP_DECORATE: u16 = 71;
const DECORATION_SPEC_ID: u32 = 1;
const EXECUTION_MODEL_KERNEL: u32 = 6;
const STORAGE_UNIFORM_CONSTANT: u32 = 0;
const STORAGE_WORKGROUP: u32 = 4;
const STORAGE_CROSS_WORKGROUP: u32 = 5;
const STORAGE_GENERIC: u32 = 8;

/// A SPIR-V literal string starting at `words`.
fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|word| word.to_le_bytes()).take_while(|&byte| byte != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Reads the module; `None` when `bytes` is not little-endian SPIR-V.
pub fn parse(bytes: &[u8]) -> Option<Module> {
    if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if words[0] != MAGIC {
        return None;
    }
    let mut entry_points: BTreeMap<u32, String> = BTreeMap::new();
    let mut pointer_storage: BTreeMap<u32, u32> = BTreeMap::new();
    let mut type_bytes: BTreeMap<u32, usize> = BTreeMap::new();
    let mut constant_types: BTreeMap<u32, u32> = BTreeMap::new();
    let mut spec_ids: BTreeMap<u32, u32> = BTreeMap::new();
    let mut parameters: BTreeMap<u32, Vec<ArgKind>> = BTreeMap::new();
    let mut current_function = None;
    let mut at = 5;
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, (words[at] & 0xffff) as u16);
        if count == 0 || at + count > words.len() {
            return None;
        }
        let operands = &words[at + 1..at + count];
        match (opcode, operands) {
            (OP_ENTRY_POINT, [EXECUTION_MODEL_KERNEL, function, name @ ..]) => {
                entry_points.insert(*function, literal_string(name));
            }
            (OP_TYPE_BOOL, [id]) => {
                type_bytes.insert(*id, 1);
            }
            (OP_TYPE_INT | OP_TYPE_FLOAT, [id, width, ..]) => {
                type_bytes.insert(*id, *width as usize / 8);
            }
            (OP_TYPE_POINTER, [id, storage, _]) => {
                pointer_storage.insert(*id, *storage);
            }
            (OP_SPEC_CONSTANT_TRUE | OP_SPEC_CONSTANT_FALSE | OP_SPEC_CONSTANT, [result_type, id, ..]) => {
                constant_types.insert(*id, *result_type);
            }
            (OP_DECORATE, [target, DECORATION_SPEC_ID, spec_id]) => {
                spec_ids.insert(*target, *spec_id);
            }
            (OP_FUNCTION, [_, id, ..]) => current_function = Some(*id),
            (OP_FUNCTION_PARAMETER, [parameter_type, _]) => {
                let kind = match pointer_storage.get(parameter_type) {
                    Some(&(STORAGE_CROSS_WORKGROUP | STORAGE_UNIFORM_CONSTANT | STORAGE_GENERIC)) => ArgKind::Global,
                    Some(&STORAGE_WORKGROUP) => ArgKind::Local,
                    _ => ArgKind::Value,
                };
                parameters.entry(current_function?).or_default().push(kind);
            }
            _ => {}
        }
        at += count;
    }
    let kernels = entry_points.into_iter().map(|(function, name)| (name, parameters.remove(&function).unwrap_or_default())).collect();
    let spec_constants = spec_ids
        .into_iter()
        .filter_map(|(id, spec_id)| Some((spec_id, *type_bytes.get(constant_types.get(&id)?)?)))
        .collect();
    Some(Module { kernels, spec_constants })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instruction(opcode: u16, operands: &[u32]) -> Vec<u32> {
        let mut words = vec![((operands.len() as u32 + 1) << 16) | opcode as u32];
        words.extend_from_slice(operands);
        words
    }

    fn module(instructions: &[Vec<u32>]) -> Vec<u8> {
        let mut words = vec![MAGIC, 0x0001_0400, 0, 100, 0];
        instructions.iter().for_each(|i| words.extend(i));
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn kernel_arguments_are_told_apart_by_storage_class() {
        // kernel void k(global float* a, local int* b, uint n, constant float* c)
        let name = u32::from_le_bytes(*b"k\0\0\0");
        let bytes = module(&[
            instruction(OP_ENTRY_POINT, &[EXECUTION_MODEL_KERNEL, 10, name]),
            instruction(OP_TYPE_INT, &[1, 32, 0]),
            instruction(OP_TYPE_POINTER, &[2, STORAGE_CROSS_WORKGROUP, 1]),
            instruction(OP_TYPE_POINTER, &[3, STORAGE_WORKGROUP, 1]),
            instruction(OP_TYPE_POINTER, &[4, STORAGE_UNIFORM_CONSTANT, 1]),
            instruction(OP_FUNCTION, &[5, 10, 0, 6]),
            instruction(OP_FUNCTION_PARAMETER, &[2, 11]),
            instruction(OP_FUNCTION_PARAMETER, &[3, 12]),
            instruction(OP_FUNCTION_PARAMETER, &[1, 13]),
            instruction(OP_FUNCTION_PARAMETER, &[4, 14]),
        ]);
        let parsed = parse(&bytes).expect("a module");
        assert_eq!(parsed.kernels["k"], [ArgKind::Global, ArgKind::Local, ArgKind::Value, ArgKind::Global]);
    }

    #[test]
    fn specialization_constants_have_the_size_of_their_type() {
        let bytes = module(&[
            instruction(OP_TYPE_INT, &[1, 64, 0]),
            instruction(OP_TYPE_BOOL, &[2]),
            instruction(OP_DECORATE, &[20, DECORATION_SPEC_ID, 7]),
            instruction(OP_DECORATE, &[21, DECORATION_SPEC_ID, 8]),
            instruction(OP_SPEC_CONSTANT, &[1, 20, 5, 0]),
            instruction(OP_SPEC_CONSTANT_TRUE, &[2, 21]),
        ]);
        assert_eq!(parse(&bytes).expect("a module").spec_constants, BTreeMap::from([(7, 8), (8, 1)]));
    }

    #[test]
    fn other_bytes_are_not_spir_v() {
        assert_eq!(parse(b"not spir-v at all!!!"), None);
        let mut truncated = module(&[instruction(OP_TYPE_INT, &[1, 32, 0])]);
        truncated.truncate(truncated.len() - 4);
        assert_eq!(parse(&truncated), None);
    }
}
