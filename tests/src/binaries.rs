//! Where the shim library and the replayer binary were built.

use std::path::{Path, PathBuf};

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `$REPRISE_TARGET_DIR`, else `$CARGO_TARGET_DIR/<profile>`, else `target/<profile>`; the profile is
/// `$REPRISE_PROFILE` or `debug` (what `scripts/test.sh` builds).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("REPRISE_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let profile = std::env::var("REPRISE_PROFILE").unwrap_or_else(|_| "debug".to_owned());
    let base = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"));
    base.join(profile)
}

fn built(name: &str) -> PathBuf {
    let path = target_dir().join(name);
    assert!(path.is_file(), "{} is missing: run `cargo build -p shim -p replayer` first", path.display());
    path
}

pub fn shim_library() -> PathBuf {
    built("libshim.so")
}

pub fn replayer() -> PathBuf {
    built("replayer")
}
