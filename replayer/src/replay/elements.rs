//! The element type of each memory object, for comparisons within a tolerance: from the
//! parameter types the trace keeps for its kernels (`Record::ParamTypes`), memory a kernel takes
//! as `float*` holds floats. One pass over the trace's segments.

use super::compare::Element;
use std::collections::HashMap;
use trace_format::{Arg, Command, FormatError, KernelId, MemId, Node, TraceReader};

/// The element type of memory that a kernel parameter of a known floating-point pointer type
/// names (the first such parameter decides); other memory is missing.
pub fn memory_elements(reader: &TraceReader) -> Result<HashMap<MemId, Element>, FormatError> {
    let types: HashMap<KernelId, &[String]> = reader.objects().param_types.iter().map(|known| (known.kernel, known.types.as_slice())).collect();
    let mut elements = HashMap::new();
    if types.is_empty() {
        return Ok(elements);
    }
    for segment in reader.segments() {
        each_launch(&segment?.nodes, &mut |kernel, args| {
            let Some(types) = types.get(&kernel) else { return };
            for (arg, spelled) in args.iter().zip(types.iter()) {
                if let (Arg::Memory { mem, .. }, Some(element)) = (arg, pointee_element(spelled)) {
                    elements.entry(*mem).or_insert(element);
                }
            }
        });
    }
    Ok(elements)
}

/// Calls `f` with each kernel launch of `nodes`, inside sub-graphs and conditional bodies too.
fn each_launch(nodes: &[Node], f: &mut dyn FnMut(KernelId, &[Arg])) {
    for node in nodes {
        match &node.command {
            Command::Kernel(launch) => f(launch.kernel, &launch.args),
            Command::Subgraph(graph) => each_launch(&graph.nodes, f),
            Command::Conditional(conditional) => conditional.bodies.iter().for_each(|body| each_launch(&body.nodes, f)),
            _ => {}
        }
    }
}

/// The floating-point element a pointer type points to: `float*`, `const __global float4*`,
/// `__half*`, `double *`.
pub fn pointee_element(spelled: &str) -> Option<Element> {
    let pointee = spelled.trim().strip_suffix('*')?;
    let base = pointee.split_whitespace().filter(|word| !matches!(*word, "const" | "volatile" | "restrict" | "__global" | "global" | "__constant" | "constant")).last()?;
    let scalar = base.trim_end_matches(|c: char| c.is_ascii_digit());
    match scalar {
        "float" => Some(Element::F32),
        "double" => Some(Element::F64),
        "half" | "__half" | "_Float16" => Some(Element::F16),
        _ => None,
    }
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
}
