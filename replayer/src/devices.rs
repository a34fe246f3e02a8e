//! Choosing the device to replay on, the same way for every API: each backend lists its
//! devices in its own order, and `--device` is an index into that list or a fragment of a
//! name. Platform names are matched before device names: PoCL names its device after the
//! CPU ("pthread-...-Intel(R) Xeon ..."), so `--device intel` must find Intel's platform
//! rather than PoCL's device. Without `--device` the device the trace was recorded on is
//! preferred when this machine has it.

use crate::backend::{BackendError, BackendResult};
use trace_format::{Api, Device};

/// One device as a backend lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The platform (OpenCL) or driver ("CUDA") the device belongs to.
    pub platform: String,
    /// Who makes the platform ("The pocl project"): `--device pocl` names PoCL by it.
    pub platform_vendor: String,
    pub name: String,
}

impl Listed {
    /// "platform / device", as reports and `replayer devices` show it.
    pub fn label(&self) -> String {
        format!("{} / {}", self.platform, self.name)
    }

    /// Whether this is the device `recorded` describes: the same name, on the same platform
    /// where the trace names one (the OpenCL shim records it as the `platform` property).
    fn is(&self, recorded: &Device) -> bool {
        self.name == recorded.name && recorded.properties.get("platform").is_none_or(|platform| *platform == self.platform)
    }
}

/// The device to replay on, with a line for the user when it is not the one they would expect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub index: usize,
    pub note: Option<String>,
}

/// Picks from `devices` (one API's, in its backend's order) the device `wanted` names: an index,
/// else the first whose platform name or vendor contains it, else the first whose device name
/// or label contains it (any case). Without `wanted`: the device `recorded` describes when
/// present, else the first (with a note when the trace names another).
pub fn choose(api: Api, devices: &[Listed], wanted: Option<&str>, recorded: Option<&Device>) -> BackendResult<Chosen> {
    if devices.is_empty() {
        return Err(BackendError::Unavailable(format!("no {api} device is installed on this machine")));
    }
    let listing = || devices.iter().enumerate().map(|(i, d)| format!("{i}: {}", d.label())).collect::<Vec<_>>().join("; ");
    let Some(wanted) = wanted else {
        return Ok(recorded_or_first(devices, recorded));
    };
    if let Ok(index) = wanted.trim().parse::<usize>() {
        return match devices.get(index) {
            Some(_) => Ok(Chosen { index, note: None }),
            None => Err(BackendError::Unavailable(format!("{api} device {index} does not exist; devices: {}", listing()))),
        };
    }
    let fragment = wanted.to_lowercase();
    let contains = |text: &str| text.to_lowercase().contains(&fragment);
    let on_platform = devices.iter().position(|d| contains(&d.platform) || contains(&d.platform_vendor));
    let by_name = || devices.iter().position(|d| contains(&d.name) || contains(&d.label()));
    match on_platform.or_else(by_name) {
        Some(index) => Ok(Chosen { index, note: None }),
        None => Err(BackendError::Unavailable(format!("no {api} device matches {wanted:?}; devices: {}", listing()))),
    }
}

fn recorded_or_first(devices: &[Listed], recorded: Option<&Device>) -> Chosen {
    let Some(recorded) = recorded else { return Chosen { index: 0, note: None } };
    if let Some(index) = devices.iter().position(|d| d.is(recorded)) {
        return Chosen { index, note: None };
    }
    let platform = recorded.properties.get("platform").map(|p| format!("{p} / ")).unwrap_or_default();
    let note = format!(
        "the trace was recorded on {platform}{}, which this machine does not have; replaying on {} (choose with --device; `replayer devices` lists them)",
        recorded.name,
        devices[0].label()
    );
    Chosen { index: 0, note: Some(note) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// PoCL listed first with its device named after an Intel CPU, then Intel's own runtime.
    fn installed() -> Vec<Listed> {
        let listed = |platform: &str, vendor: &str, name: &str| Listed { platform: platform.into(), platform_vendor: vendor.into(), name: name.into() };
        vec![
            listed("Portable Computing Language", "The pocl project", "pthread-skylake-avx512-Intel(R) Xeon(R) Gold 6148"),
            listed("Intel(R) OpenCL", "Intel(R) Corporation", "Intel(R) Xeon(R) Gold 6148"),
        ]
    }

    fn recorded(platform: Option<&str>, name: &str) -> Device {
        let properties: BTreeMap<String, String> = platform.map(|p| ("platform".to_string(), p.to_string())).into_iter().collect();
        Device { name: name.into(), vendor: "GenuineIntel".into(), driver_version: "1".into(), properties }
    }

    fn index(wanted: Option<&str>, recorded: Option<&Device>) -> usize {
        choose(Api::OpenCl, &installed(), wanted, recorded).expect("a device is chosen").index
    }

    #[test]
    fn platform_names_and_vendors_are_matched_before_device_names() {
        assert_eq!(index(Some("Intel"), None), 1);
        assert_eq!(index(Some("pocl"), None), 0);
        assert_eq!(index(Some("portable"), None), 0);
        // Only a device name has it.
        assert_eq!(index(Some("pthread"), None), 0);
        assert_eq!(index(Some("intel(r) opencl / intel"), None), 1);
    }

    #[test]
    fn an_index_is_a_position_in_the_list() {
        assert_eq!(index(Some("1"), None), 1);
        let error = choose(Api::OpenCl, &installed(), Some("2"), None).expect_err("there is no device 2");
        assert!(matches!(&error, BackendError::Unavailable(m) if m.contains("OpenCL device 2 does not exist") && m.contains("1: Intel(R) OpenCL / Intel(R) Xeon(R) Gold 6148")), "{error}");
        let error = choose(Api::OpenCl, &installed(), Some("nvidia"), None).expect_err("no NVIDIA device");
        assert!(error.to_string().contains("no OpenCL device matches \"nvidia\""), "{error}");
    }

    #[test]
    fn the_recorded_device_is_preferred_and_its_absence_noted() {
        let intel = recorded(Some("Intel(R) OpenCL"), "Intel(R) Xeon(R) Gold 6148");
        assert_eq!(choose(Api::OpenCl, &installed(), None, Some(&intel)).expect("chosen"), Chosen { index: 1, note: None });
        // --device wins over the recording.
        assert_eq!(index(Some("pocl"), Some(&intel)), 0);
        // The same CPU under another platform is another device.
        let elsewhere = recorded(Some("Other OpenCL"), "Intel(R) Xeon(R) Gold 6148");
        let chosen = choose(Api::OpenCl, &installed(), None, Some(&elsewhere)).expect("chosen");
        assert_eq!(chosen.index, 0);
        let note = chosen.note.expect("a note says the recorded device is missing");
        assert!(note.contains("recorded on Other OpenCL / Intel(R) Xeon(R) Gold 6148") && note.contains("replaying on Portable Computing Language"), "{note}");
        // A trace without a platform (CUDA) matches by name.
        let by_name = recorded(None, "Intel(R) Xeon(R) Gold 6148");
        assert_eq!(index(None, Some(&by_name)), 1);
        assert_eq!(index(None, None), 0);
    }

    #[test]
    fn no_devices_is_unavailable() {
        let error = choose(Api::Cuda, &[], None, None).expect_err("nothing to choose");
        assert!(matches!(&error, BackendError::Unavailable(m) if m == "no CUDA device is installed on this machine"), "{error}");
    }
}
