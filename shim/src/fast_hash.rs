//! Maps and sets keyed by the program's handles and addresses, hashed with FxHash (a multiply
//! and a rotate) instead of the standard SipHash: the keys come from the driver, not from an
//! attacker, and SipHash was a fifth of the shim's time per recorded launch.

pub type HashMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;
pub type HashSet<K> = std::collections::HashSet<K, rustc_hash::FxBuildHasher>;
