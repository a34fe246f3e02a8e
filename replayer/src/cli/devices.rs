//! `replayer devices`: every device each API backend could replay on, with the indices
//! `--device` takes.

use super::failure::Failure;
use super::inspect::print_json;
use replayer::backends::{self, APIS};
use std::process::ExitCode;

/// Lists the devices; exit 3 when no API has any.
pub fn devices(json: bool) -> Result<ExitCode, Failure> {
    let listings: Vec<_> = APIS.iter().map(|&api| (api, backends::devices(api))).collect();
    if json {
        let apis: Vec<serde_json::Value> = listings
            .iter()
            .map(|(api, listed)| match listed {
                Ok(devices) => {
                    let devices: Vec<serde_json::Value> = devices
                        .iter()
                        .enumerate()
                        .map(|(index, d)| serde_json::json!({ "index": index, "platform": d.platform, "platform_vendor": d.platform_vendor, "device": d.name }))
                        .collect();
                    serde_json::json!({ "api": api.to_string(), "devices": devices })
                }
                Err(why) => serde_json::json!({ "api": api.to_string(), "devices": [], "unavailable": why.to_string() }),
            })
            .collect();
        print_json(&serde_json::json!({ "apis": apis }))?;
    } else {
        for (api, listed) in &listings {
            match listed {
                Ok(devices) => {
                    for (index, device) in devices.iter().enumerate() {
                        println!("{api} {index}: {} ({}) / {}", device.platform, device.platform_vendor, device.name);
                    }
                }
                Err(why) => println!("{api}: unavailable: {why}"),
            }
        }
    }
    if listings.iter().any(|(_, listed)| listed.as_ref().is_ok_and(|devices| !devices.is_empty())) {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::unavailable("no device of any API is available on this machine"))
    }
}
