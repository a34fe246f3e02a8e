//! The program's own references to the OpenCL objects whose release the shim follows (memory,
//! queues, kernels). The driver's reference count cannot tell when the program let go of an
//! object: it also counts the driver's own references (a pending command holds its buffers),
//! and an object the shim goes on using after the program's last release may be gone.

use crate::fast_hash::HashMap;
use crate::recorder::Key;

#[derive(Default)]
pub struct References(HashMap<Key, u32>);

impl References {
    pub fn created(&mut self, object: Key) {
        self.0.insert(object, 1);
    }

    pub fn retained(&mut self, object: Key) {
        if let Some(count) = self.0.get_mut(&object) {
            *count += 1;
        }
    }

    /// One release by the program: whether it was its last reference (also for an object the
    /// shim never saw created, which it must not use any more either way).
    pub fn released(&mut self, object: Key) -> bool {
        match self.0.get_mut(&object) {
            Some(count) if *count > 1 => {
                *count -= 1;
                false
            }
            _ => {
                self.0.remove(&object);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::References;

    #[test]
    fn the_last_release_of_the_program_s_references_is_the_last() {
        let mut references = References::default();
        references.created(1);
        references.retained(1);
        assert!(!references.released(1));
        assert!(references.released(1));
        references.retained(2); // never seen created
        assert!(references.released(2));
    }
}
