//! The debug builds of the shim and the replayer (`cargo build -p shim -p replayer` makes them).

use std::path::PathBuf;

/// The workspace's target directory: `CARGO_TARGET_DIR` when set, else `target/` beside `tests/`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => repository_root().join("target"),
    }
}

pub fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn shim_library() -> PathBuf {
    built("libshim.so")
}

pub fn replayer_binary() -> PathBuf {
    built("replayer")
}

fn built(name: &str) -> PathBuf {
    let path = target_dir().join("debug").join(name);
    assert!(path.is_file(), "{} is missing: run `cargo build -p shim -p replayer` first", path.display());
    path
}
