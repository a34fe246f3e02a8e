//! A blob's bytes on their way to the writer: owned, or still in memory an API module lends
//! until a preparing thread has copied them out (data the device delivered into host memory of
//! the shim's own, so that the program's thread copies nothing).

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes an API module lends the writer; dropping the loan gives the memory back.
pub trait Lent: Send {
    fn bytes(&self) -> &[u8];
}

pub enum BlobBytes {
    Owned(Vec<u8>),
    Lent(Box<dyn Lent>),
}

/// Bytes lent so far (reported at the end beside what the program's threads copied).
static LENT_BYTES: AtomicU64 = AtomicU64::new(0);

/// How many bytes were lent as blobs so far.
pub fn lent() -> u64 {
    LENT_BYTES.load(Ordering::Relaxed)
}

impl BlobBytes {
    pub fn lent(lent: Box<dyn Lent>) -> BlobBytes {
        LENT_BYTES.fetch_add(lent.bytes().len() as u64, Ordering::Relaxed);
        BlobBytes::Lent(lent)
    }

    pub fn len(&self) -> usize {
        match self {
            BlobBytes::Owned(bytes) => bytes.len(),
            BlobBytes::Lent(lent) => lent.bytes().len(),
        }
    }

    /// The bytes as a vector: a lent blob's are copied out (on the calling thread, which is the
    /// writer's or a preparing thread) and the loan ends.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            BlobBytes::Owned(bytes) => bytes,
            BlobBytes::Lent(lent) => crate::large_buffers::copy_on_shim_thread(lent.bytes()),
        }
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// A loan that says when it ended.
    pub struct TestLoan {
        pub bytes: Vec<u8>,
        pub returned: Arc<AtomicBool>,
    }

    impl Lent for TestLoan {
        fn bytes(&self) -> &[u8] {
            &self.bytes
        }
    }

    impl Drop for TestLoan {
        fn drop(&mut self) {
            self.returned.store(true, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_lent_blob_is_copied_out_and_its_loan_ends() {
        let returned = Arc::new(AtomicBool::new(false));
        let blob = BlobBytes::lent(Box::new(TestLoan { bytes: vec![5; 3 << 20], returned: Arc::clone(&returned) }));
        assert_eq!(blob.len(), 3 << 20);
        let bytes = blob.into_vec();
        assert!(returned.load(Ordering::Relaxed));
        assert!(bytes.len() == 3 << 20 && bytes.iter().all(|&byte| byte == 5));
    }
}
