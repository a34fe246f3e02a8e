//! The parameter types of a CUDA kernel, from its mangled name (the Itanium C++ ABI, which nvcc
//! uses): `_Z5scalePfPKfi` is `scale(float*, const float*, int)`. Only what comparisons need is
//! read: builtin types, pointers and qualifiers, plain class names (`__half`) and namespaces.
//! A name using more (templates, substitutions of names) gives no types rather than wrong ones;
//! `extern "C"` kernels are not mangled and give none either.

/// Each parameter's type as C spells it; empty when the name cannot be read with certainty.
pub fn param_types(name: &str) -> Vec<String> {
    let Some(encoding) = name.strip_prefix("_Z") else { return Vec::new() };
    let mut reader = Reader { rest: encoding.as_bytes(), substitutions: Vec::new() };
    let parsed = (|| {
        reader.function_name()?;
        let mut types = Vec::new();
        while !reader.rest.is_empty() {
            types.push(reader.parameter()?);
        }
        // `v` alone is an empty parameter list.
        Some(if types == ["void"] { Vec::new() } else { types })
    })();
    parsed.unwrap_or_default()
}

struct Reader<'a> {
    rest: &'a [u8],
    /// Types that `S_`, `S0_`, ... name again, in the order they were first written.
    substitutions: Vec<String>,
}

impl Reader<'_> {
    fn next(&mut self) -> Option<u8> {
        let (&first, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(first)
    }

    fn eat(&mut self, prefix: &str) -> bool {
        let found = self.rest.starts_with(prefix.as_bytes());
        if found {
            self.rest = &self.rest[prefix.len()..];
        }
        found
    }

    /// `<length><identifier>`.
    fn source_name(&mut self) -> Option<String> {
        let digits = self.rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
        let length: usize = std::str::from_utf8(&self.rest[..digits]).ok()?.parse().ok()?;
        let end = digits.checked_add(length).filter(|&end| end <= self.rest.len())?;
        let name = std::str::from_utf8(&self.rest[digits..end]).ok()?.to_string();
        self.rest = &self.rest[end..];
        Some(name)
    }

    /// The kernel's name: a source name, or namespaces and a name between `N` and `E`. Their
    /// prefixes are substitution candidates too, so a name with namespaces allows none.
    fn function_name(&mut self) -> Option<()> {
        if self.eat("N") {
            while !self.eat("E") {
                self.source_name()?;
            }
            self.substitutions.push(String::new()); // poisons S_ references: their order is not followed here
        } else {
            self.source_name()?;
        }
        Some(())
    }

    fn parameter(&mut self) -> Option<String> {
        let start = self.rest;
        let spelled = match self.next()? {
            b'P' => format!("{}*", self.parameter()?),
            b'K' => format!("const {}", self.parameter()?),
            b'V' => format!("volatile {}", self.parameter()?),
            b'r' => self.parameter()?,
            b'S' => return self.substitution(),
            b'0'..=b'9' => {
                self.rest = start;
                self.source_name()?
            }
            b'D' => match self.next()? {
                b'h' => "half".to_string(),
                b'F' if self.eat("16_") => "_Float16".to_string(),
                _ => return None,
            },
            builtin => return builtin_name(builtin).map(str::to_string),
        };
        // A compound type or class name may be named again by a substitution.
        self.substitutions.push(spelled.clone());
        Some(spelled)
    }

    /// `S_` is the first candidate, `S0_` the second, `S1_` the third (base 36).
    fn substitution(&mut self) -> Option<String> {
        let digits = self.rest.iter().take_while(|byte| byte.is_ascii_alphanumeric() && !byte.is_ascii_lowercase()).count();
        let index = match digits {
            0 => 0,
            _ => usize::from_str_radix(std::str::from_utf8(&self.rest[..digits]).ok()?, 36).ok()? + 1,
        };
        self.rest = &self.rest[digits..];
        if !self.eat("_") || self.substitutions.first().is_some_and(String::is_empty) {
            return None;
        }
        self.substitutions.get(index).cloned()
    }
}

fn builtin_name(code: u8) -> Option<&'static str> {
    Some(match code {
        b'v' => "void",
        b'b' => "bool",
        b'c' => "char",
        b'a' => "signed char",
        b'h' => "unsigned char",
        b's' => "short",
        b't' => "unsigned short",
        b'i' => "int",
        b'j' => "unsigned int",
        b'l' => "long",
        b'm' => "unsigned long",
        b'x' => "long long",
        b'y' => "unsigned long long",
        b'f' => "float",
        b'd' => "double",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::param_types;

    #[test]
    fn builtin_pointer_and_qualified_parameters_are_spelled_as_c_spells_them() {
        assert_eq!(param_types("_Z5scalePfPKfi"), ["float*", "const float*", "int"]);
        assert_eq!(param_types("_Z3addPdS_S_m"), ["double*", "double*", "double*", "unsigned long"]);
        assert_eq!(param_types("_Z4halfP6__halfPKS_PK13__nv_bfloat16"), ["__half*", "const __half*", "const __nv_bfloat16*"]);
        assert_eq!(param_types("_Z7float16PDF16_"), ["_Float16*"]);
        assert_eq!(param_types("_Z4stepPii"), ["int*", "int"]);
        assert_eq!(param_types("_Z5emptyv"), Vec::<String>::new());
    }

    #[test]
    fn names_it_cannot_read_with_certainty_give_no_types() {
        // Not mangled (extern "C"), templates, and substitutions after namespaces.
        assert!(param_types("vector_add").is_empty());
        assert!(param_types("_Z6kernelIfEvPT_").is_empty());
        assert!(param_types("_ZN2at6native6kernelEPfS1_").is_empty());
        assert!(param_types("_Z3badPq").is_empty());
        assert!(param_types("_Z3").is_empty());
        // Namespaces without substitutions read.
        assert_eq!(param_types("_ZN4cuda6kernelEPfi"), ["float*", "int"]);
    }
}
