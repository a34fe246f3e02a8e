//! The hand-written structures, tables and constants against the system's Level Zero headers
//! (`libze-dev`): a C program prints what the compiler makes of each, and it must be what Rust
//! makes of ours.

use std::process::Command;

/// Builds and runs a C program including `ze_ddi.h` with `body` in `main`; returns its output lines.
fn c_output(name: &str, body: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("ze-sys-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = format!("#include <level_zero/ze_ddi.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {{\n{body}return 0;\n}}\n");
    std::fs::write(dir.join("probe.c"), source).unwrap();
    let built = Command::new("cc").arg("-o").arg(dir.join("probe")).arg(dir.join("probe.c")).output().unwrap();
    assert!(built.status.success(), "cc could not build the probe against level_zero/ze_ddi.h:\n{}", String::from_utf8_lossy(&built.stderr));
    let output = Command::new(dir.join("probe")).output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    String::from_utf8(output.stdout).unwrap().lines().map(str::to_owned).collect()
}

/// C's and Rust's `size` and field `offset` lines for each layout.
fn compare_layouts(name: &str, layouts: &[crate::structs::Layout]) {
    let mut body = String::new();
    let mut expected = Vec::new();
    for (structure, size, fields) in layouts {
        body += &format!("printf(\"{structure} %zu\\n\", sizeof({structure}));\n");
        expected.push(format!("{structure} {size}"));
        for (field, offset) in *fields {
            // `type` is a Rust keyword: the Rust field is `type_`.
            let c_field = field.strip_suffix('_').unwrap_or(field);
            body += &format!("printf(\"{structure}.{field} %zu\\n\", offsetof({structure}, {c_field}));\n");
            expected.push(format!("{structure}.{field} {offset}"));
        }
    }
    assert_eq!(c_output(name, &body), expected);
}

#[test]
fn structures_match_the_headers() {
    compare_layouts("structs", crate::structs::STRUCT_LAYOUTS);
}

#[test]
fn dispatch_tables_match_the_headers() {
    compare_layouts("tables", crate::tables::TABLE_LAYOUTS);
}

#[test]
fn constants_match_the_headers() {
    let body: String = crate::constants::CONSTANTS.iter().map(|(name, _)| format!("printf(\"{name} %llu\\n\", (unsigned long long){name});\n")).collect();
    let expected: Vec<String> = crate::constants::CONSTANTS.iter().map(|(name, value)| format!("{name} {value}")).collect();
    assert_eq!(c_output("constants", &body), expected);
}

/// The extension's structures are not in the 1.4 headers: they follow the specification's layout
/// rules, which a driver relies on when it walks a chain (`stype`, `pNext`, then `commandId`).
#[test]
fn mutable_command_structures_start_like_every_chained_structure() {
    for (structure, _, fields) in crate::mutable::MUTABLE_LAYOUTS {
        assert_eq!(&fields[..2], &[("stype", 0), ("pNext", 8)], "{structure}");
        if let Some((_, offset)) = fields.iter().find(|(field, _)| *field == "commandId") {
            assert_eq!(*offset, 16, "{structure}");
        }
    }
    let sizes: Vec<(&str, usize)> = crate::mutable::MUTABLE_LAYOUTS.iter().map(|(name, size, _)| (*name, *size)).collect();
    assert!(sizes.contains(&("ze_mutable_kernel_argument_exp_desc_t", 48)), "{sizes:?}");
    assert!(sizes.contains(&("ze_mutable_group_size_exp_desc_t", 40)), "{sizes:?}");
}
