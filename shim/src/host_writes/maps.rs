//! Whether pages lie in writable mappings (`/proc/self/maps`): only those are watched, so that
//! making them writable again never grants the program a write it did not have.

/// Whether every page of `[start, end)` lies in a readable and writable mapping.
pub fn writable(start: u64, end: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return false };
    let mut covered = start;
    let mut mappings: Vec<(u64, u64)> = maps.lines().filter_map(writable_mapping).collect();
    mappings.sort_unstable();
    for (from, to) in mappings {
        if from <= covered && covered < to {
            covered = to;
        }
        if covered >= end {
            return true;
        }
    }
    false
}

/// A `maps` line's range, if the mapping is readable and writable.
fn writable_mapping(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    let (from, to) = fields.next()?.split_once('-')?;
    let permissions = fields.next()?;
    permissions.starts_with("rw").then_some(())?;
    Some((u64::from_str_radix(from, 16).ok()?, u64::from_str_radix(to, 16).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mappings_that_are_readable_and_writable_count() {
        assert_eq!(writable_mapping("7f00-7f10 rw-p 00000000 00:00 0"), Some((0x7f00, 0x7f10)));
        assert_eq!(writable_mapping("7f00-7f10 r--p 00000000 00:00 0 /lib/x.so"), None);
        let page = crate::host_writes::PAGE as usize;
        let memory = vec![0u8; 4 * page];
        let start = (memory.as_ptr() as u64).next_multiple_of(page as u64);
        assert!(writable(start, start + 2 * page as u64));
        let code = writable as *const () as u64 & !(page as u64 - 1);
        assert!(!writable(code, code + page as u64));
    }
}
