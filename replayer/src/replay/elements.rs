//! What the parameter types the trace keeps for its kernels (`Record::ParamTypes`) say of
//! memory: the element type of each memory object, for comparisons within a tolerance (memory a
//! kernel takes as `float*` holds floats; one pass over the trace's segments), and which
//! parameters only read (`const float*`, for hazards).

use super::compare::Element;
use std::collections::HashMap;
use trace_format::{Arg, Command, FormatError, KernelId, MemId, TraceReader};

/// The element type of memory that a kernel parameter of a known floating-point pointer type
/// names (the first such parameter decides); other memory is missing.
pub fn memory_elements(reader: &TraceReader) -> Result<HashMap<MemId, Element>, FormatError> {
    let types: HashMap<KernelId, &[String]> = reader.objects().param_types.iter().map(|known| (known.kernel, known.types.as_slice())).collect();
    let mut elements = HashMap::new();
    if types.is_empty() {
        return Ok(elements);
    }
    for segment in reader.segments() {
        for node in &segment?.nodes {
            node.command.for_each_leaf(&mut |command| {
                let Command::Kernel(launch) = command else { return };
                let Some(types) = types.get(&launch.kernel) else { return };
                for (arg, spelled) in launch.args.iter().zip(types.iter()) {
                    if let (Arg::Memory { mem, .. }, Some(element)) = (arg, pointee_element(spelled)) {
                        elements.entry(*mem).or_insert(element);
                    }
                }
            });
        }
    }
    Ok(elements)
}

/// The floating-point element a pointer type points to: `float*`, `const __global float4*`,
/// `__half*`, `double *`.
pub fn pointee_element(spelled: &str) -> Option<Element> {
    let pointee = spelled.trim().strip_suffix('*')?;
    let base = pointee.split_whitespace().rfind(|word| !matches!(*word, "const" | "volatile" | "restrict" | "__global" | "global" | "__constant" | "constant"))?;
    let scalar = base.trim_end_matches(|c: char| c.is_ascii_digit());
    match scalar {
        "float" => Some(Element::F32),
        "double" => Some(Element::F64),
        "half" | "__half" | "_Float16" => Some(Element::F16),
        _ => None,
    }
}

/// `const float*`, `__global const float4 *`, `const __half*`: a pointer to memory the kernel only reads.
pub fn points_to_const(spelled: &str) -> bool {
    spelled.trim().strip_suffix('*').is_some_and(|pointee| !pointee.contains('*') && pointee.split_whitespace().any(|word| word == "const"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_pointers_name_their_element_and_nothing_else_does() {
        assert_eq!(pointee_element("float*"), Some(Element::F32));
        assert_eq!(pointee_element("const __global float4 *"), Some(Element::F32));
        assert_eq!(pointee_element("double*"), Some(Element::F64));
        assert_eq!(pointee_element("const __half*"), Some(Element::F16));
        assert_eq!(pointee_element("half16*"), Some(Element::F16));
        assert_eq!(pointee_element("float"), None);
        assert_eq!(pointee_element("int*"), None);
        assert_eq!(pointee_element("__nv_bfloat16*"), None);
    }

    #[test]
    fn pointers_to_const_are_read_only() {
        assert!(points_to_const("__global const float4 *") && points_to_const("const __half*"));
        assert!(!points_to_const("float* const*") && !points_to_const("const float") && !points_to_const("float*"));
    }
}
