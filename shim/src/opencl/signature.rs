//! A kernel's parameter types read from its OpenCL C source, for drivers that keep no argument
//! information (`clGetKernelArgInfo` answers `CL_KERNEL_ARG_INFO_NOT_AVAILABLE` on PoCL and
//! Intel's runtime unless the program was built with `-cl-kernel-arg-info`, which the shim does
//! not add: the program's build stays its own). Types come out as the source spells them, without
//! the parameter name: `__global const float*`.

/// The types of the parameters of kernel `name` as `source` declares it; empty where the
/// declaration cannot be found or read (a macro, say).
pub fn parameter_types(source: &str, name: &str) -> Vec<String> {
    let code = without_comments(source);
    let mut from = 0;
    while let Some(found) = code[from..].find(name) {
        let start = from + found;
        from = start + name.len();
        let before = code[..start].trim_end();
        // `kernel void` or `__kernel void`, or `__kernel __attribute__((...)) void`.
        let is_kernel = before.strip_suffix("void").map(str::trim_end).is_some_and(|qualifiers| qualifiers.ends_with("kernel") || qualifiers.ends_with(')'));
        let after = code[from..].trim_start();
        if !is_kernel || !after.starts_with('(') || code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        return match after[1..].find(')') {
            Some(end) => parameters(&after[1..1 + end]).unwrap_or_default(),
            None => Vec::new(),
        };
    }
    Vec::new()
}

/// `__global float *out, const int n` as `["__global float*", "const int"]`.
fn parameters(list: &str) -> Option<Vec<String>> {
    if list.trim().is_empty() || list.trim() == "void" {
        return Some(Vec::new());
    }
    list.split(',').map(parameter_type).collect()
}

fn parameter_type(declaration: &str) -> Option<String> {
    let spaced = declaration.replace('*', " * ");
    let mut words: Vec<&str> = spaced.split_whitespace().collect();
    // The last word names the parameter; arrays and brackets are not read.
    let name = words.pop()?;
    if !name.chars().all(|c| c.is_alphanumeric() || c == '_') || words.is_empty() {
        return None;
    }
    let pointers = words.iter().filter(|word| **word == "*").count();
    let base: Vec<&str> = words.into_iter().filter(|word| *word != "*").collect();
    Some(format!("{}{}", base.join(" "), "*".repeat(pointers)))
}

fn without_comments(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    let mut rest = source;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            code.push(' ');
        } else {
            let next = rest.chars().next().unwrap_or(' ');
            code.push(next);
            rest = &rest[next.len_utf8()..];
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::parameter_types;

    const SOURCE: &str = "
        // squares: out = scale * in^2
        __kernel void square(__global float *out, __global const float *in, float scale) { }
        /* a kernel with no parameters */ kernel void nothing(void) {}
        __kernel __attribute__((reqd_work_group_size(64, 1, 1))) void fixed(__global half4* restrict data, uint n) {}
        void square_helper(float x) {}
    ";

    #[test]
    fn kernels_are_found_by_name_and_their_parameters_read() {
        assert_eq!(parameter_types(SOURCE, "square"), ["__global float*", "__global const float*", "float"]);
        assert_eq!(parameter_types(SOURCE, "nothing"), Vec::<String>::new());
        assert_eq!(parameter_types(SOURCE, "fixed"), ["__global half4 restrict*", "uint"]);
    }

    #[test]
    fn what_is_not_a_kernel_declaration_gives_nothing() {
        assert!(parameter_types(SOURCE, "square_helper").is_empty());
        assert!(parameter_types(SOURCE, "missing").is_empty());
        assert!(parameter_types("#define K(n) __kernel void n(__global int *a)\nK(macro)", "macro").is_empty());
    }
}
