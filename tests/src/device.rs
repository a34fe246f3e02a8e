//! The OpenCL devices the tests run on: PoCL always (CI installs it, so its absence is a
//! failure), Intel's CPU runtime when `$REPRISE_INTEL_OCL` names its `libintelocl.so`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use tempfile::TempDir;

#[derive(Clone, Debug)]
pub enum Device {
    Pocl,
    Intel(IntelRuntime),
}

#[derive(Clone, Debug)]
pub struct IntelRuntime {
    /// The path of `libintelocl.so`.
    library: PathBuf,
    /// A vendors directory naming only `library`, for ICD loaders that ignore `OCL_ICD_FILENAMES`
    /// (the one bundled with the pyopencl wheel reads only `OCL_ICD_VENDORS`).
    vendors: Arc<TempDir>,
}

impl Device {
    /// PoCL: the platform the system's ICD loader lists first.
    pub fn pocl() -> Device {
        Device::Pocl
    }

    /// Intel's runtime, or `None` (with a line saying why the caller skips) when it is not configured.
    pub fn intel() -> Option<Device> {
        match std::env::var_os("REPRISE_INTEL_OCL") {
            Some(path) => {
                let path = PathBuf::from(path);
                assert!(path.is_file(), "REPRISE_INTEL_OCL={} is not a file", path.display());
                let vendors = tempfile::Builder::new().prefix("reprise-icd-").tempdir().expect("a scratch directory");
                let icd = format!("{}\n", path.display());
                std::fs::write(vendors.path().join("intel.icd"), icd).expect("the ICD file is written");
                Some(Device::Intel(IntelRuntime { library: path, vendors: Arc::new(vendors) }))
            }
            None => {
                eprintln!("skipped: REPRISE_INTEL_OCL (path of libintelocl.so) is not set");
                None
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Device::Pocl => "pocl",
            Device::Intel(_) => "intel",
        }
    }

    /// What the test programs' `$REPRISE_TEST_PLATFORM` and the replayer's `--device` match
    /// (case-insensitively) in the platform or device name.
    pub fn selector(&self) -> &'static str {
        match self {
            Device::Pocl => "portable",
            Device::Intel(_) => "intel",
        }
    }

    /// Sets up `command`'s environment as on a machine with both runtimes installed: the ICD
    /// loader lists PoCL's platform first, then Intel's (this device, which must be Intel's).
    pub fn configure_after_pocl(&self, command: &mut Command) {
        let Device::Intel(IntelRuntime { library, vendors }) = self else { panic!("only Intel's runtime comes after PoCL") };
        self.configure(command);
        let pocl = pocl_library();
        let mut libraries = std::ffi::OsString::from(pocl);
        libraries.push(":");
        libraries.push(library);
        // An empty vendors directory: the loader takes the libraries in the order given.
        command.env("OCL_ICD_FILENAMES", libraries).env("OCL_ICD_VENDORS", vendors.path().join("none")).env_remove("REPRISE_TEST_PLATFORM");
    }

    /// Sets up `command`'s environment as on a machine where the ICD files of PoCL and of Intel's
    /// runtime (this device, which must be Intel's) are both registered, for whichever loader the
    /// program finds: with `intel_loader`, the one Intel's wheels ship beside `libintelocl.so`
    /// (first on `LD_LIBRARY_PATH`), else the system's (pyopencl brings its own either way).
    pub fn configure_both_registered(&self, command: &mut Command, intel_loader: bool) {
        let Device::Intel(IntelRuntime { library, vendors }) = self else { panic!("only Intel's runtime is registered beside PoCL") };
        let both = vendors.path().join("both");
        std::fs::create_dir_all(&both).expect("a vendors directory");
        std::fs::write(both.join("intel.icd"), format!("{}\n", library.display())).expect("the ICD file is written");
        std::fs::write(both.join("pocl.icd"), format!("{}\n", pocl_library())).expect("the ICD file is written");
        command.env("OCL_ICD_VENDORS", &both).env_remove("OCL_ICD_FILENAMES").env_remove("REPRISE_TEST_PLATFORM");
        if intel_loader {
            command.env("LD_LIBRARY_PATH", library.parent().expect("a library lies in a directory"));
        } else {
            command.env_remove("LD_LIBRARY_PATH");
        }
    }

    /// Sets up `command`'s environment so that it sees this device and the programs choose it.
    pub fn configure(&self, command: &mut Command) {
        command.env("REPRISE_TEST_PLATFORM", self.selector());
        if let Device::Intel(IntelRuntime { library, vendors }) = self {
            command.env("OCL_ICD_FILENAMES", library).env("OCL_ICD_VENDORS", vendors.path());
            let dir = library.parent().map(PathBuf::from).unwrap_or_default();
            let mut paths = vec![dir];
            if let Some(existing) = std::env::var_os("LD_LIBRARY_PATH") {
                paths.extend(std::env::split_paths(&existing));
            }
            command.env("LD_LIBRARY_PATH", std::env::join_paths(paths).expect("library paths hold no ':'"));
        }
    }
}

/// The library the system's ICD file for PoCL names.
fn pocl_library() -> String {
    let vendors = std::path::Path::new("/etc/OpenCL/vendors");
    let entries = std::fs::read_dir(vendors).expect("the system's ICD directory (PoCL's ICD file) exists");
    let icd = entries.flatten().map(|entry| entry.path()).find(|path| path.to_string_lossy().contains("pocl")).expect("PoCL's ICD file is installed");
    std::fs::read_to_string(&icd).expect("the ICD file reads").trim().to_string()
}
