//! Level Zero in the tests: the test-double driver (`ze-test-driver`, `libze_reprise_test.so`)
//! that the loader finds through `ZE_ENABLE_ALT_DRIVERS` and that needs Intel's CPU OpenCL
//! runtime, the test programs of `tests/level_zero/`, and their kernels compiled to SPIR-V at test
//! time with `clang-15` and `llvm-spirv-15`.

use crate::binaries::target_dir;
use crate::program::{source_path, Build, Program};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The test double's variable that hides the mutable command list extension.
pub const NO_MUTABLE: &str = "ZE_REPRISE_TEST_NO_MUTABLE";

/// The test-double driver with what it needs to run.
#[derive(Clone, Debug)]
pub struct TestDriver {
    library: PathBuf,
    intel_runtime: PathBuf,
}

impl TestDriver {
    /// The driver, or `None` (with a line saying why the caller skips) without Intel's runtime.
    pub fn get() -> Option<TestDriver> {
        let Some(intel_runtime) = std::env::var_os("REPRISE_INTEL_OCL").filter(|path| !path.is_empty()) else {
            eprintln!("skipped: REPRISE_INTEL_OCL (path of libintelocl.so), which the Level Zero test double runs on, is not set");
            return None;
        };
        let library = target_dir().join("libze_reprise_test.so");
        assert!(library.is_file(), "{} is missing: run `cargo build -p ze-test-driver` first", library.display());
        Some(TestDriver { library, intel_runtime: intel_runtime.into() })
    }

    pub fn library(&self) -> &Path {
        &self.library
    }

    /// Makes `command` see this driver (and no other) and the test kernels.
    pub fn configure(&self, command: &mut Command) {
        command.env("ZE_ENABLE_ALT_DRIVERS", &self.library).env("REPRISE_INTEL_OCL", &self.intel_runtime).env("REPRISE_TEST_SPIRV", test_kernels());
    }
}

/// `tests/level_zero/<name>.c`, linked against the Level Zero loader.
pub fn program(name: &str) -> Program {
    let source = format!("tests/level_zero/{name}.c");
    Program::build_c(name, &Build { source: &source, defines: &[], libraries: &["ze_loader"] })
}

/// `tests/level_zero/kernels.cl` as SPIR-V, compiled once per test process.
pub fn test_kernels() -> &'static Path {
    static COMPILED: OnceLock<PathBuf> = OnceLock::new();
    COMPILED.get_or_init(|| spirv(&source_path("tests/level_zero/kernels.cl")))
}

/// Compiles OpenCL C to SPIR-V (`clang-15 -cl-std=CL2.0 -target spir64`, then `llvm-spirv-15`)
/// into the target directory; returns the module's path. Test processes run in parallel, so each
/// writes its own file and renames it into place.
pub fn spirv(source: &Path) -> PathBuf {
    let directory = target_dir().join("spirv");
    std::fs::create_dir_all(&directory).expect("the SPIR-V directory");
    let stem = source.file_stem().expect("a source file").to_string_lossy().into_owned();
    let scratch = directory.join(format!("{stem}-{}", std::process::id()));
    let bitcode = scratch.with_extension("bc");
    let module = scratch.with_extension("spv");
    let run = |program: &str, args: &[&std::ffi::OsStr]| {
        let output = Command::new(program).args(args).output().unwrap_or_else(|error| panic!("{program} does not run ({error}): scripts/setup.sh installs it"));
        assert!(output.status.success(), "{program} failed on {}:\n{}", source.display(), String::from_utf8_lossy(&output.stderr));
    };
    run("clang-15", &["-cl-std=CL2.0".as_ref(), "-target".as_ref(), "spir64".as_ref(), "-emit-llvm".as_ref(), "-c".as_ref(), source.as_os_str(), "-o".as_ref(), bitcode.as_os_str()]);
    run("llvm-spirv-15", &[bitcode.as_os_str(), "-o".as_ref(), module.as_os_str()]);
    let _ = std::fs::remove_file(&bitcode);
    let path = directory.join(format!("{stem}.spv"));
    std::fs::rename(&module, &path).expect("the SPIR-V module moves into place");
    path
}
