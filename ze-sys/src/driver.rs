//! The driver side of the loader interface, derived from the description in `api`: a driver
//! implements `Driver` (every function a method; those it leaves out return
//! `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`) and calls `export_driver!(ItsType)`, which exports the
//! `zeGet*ProcAddrTable` functions the loader (1.8) asks of every driver library, tools and
//! sysman tables included (those come back empty).

use crate::*;
use std::ffi::{c_void, CStr};

/// Runs a driver function, turning a panic into `ZE_RESULT_ERROR_UNKNOWN` instead of unwinding
/// into the caller's C code.
fn guard(function: impl FnOnce() -> ze_result_t) -> ze_result_t {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(function)).unwrap_or(ZE_RESULT_ERROR_UNKNOWN)
}

/// A dispatch table filled with a driver's functions.
pub trait DriverTable: Sized {
    fn of<D: Driver>() -> Self;
}

macro_rules! define_driver {
    ([]
     tables { $( $table:ident $getter:ident $struct:ident { $( $slot:ident => $function:ident($($arg:ident: $ty:ty),*); )* } )* }
     extensions { $( $extension:ident { $( $xfunction:ident($($xarg:ident: $xty:ty),*); )* } )* }
    ) => {
        /// A Level Zero driver: one method per function of the API and of its extensions.
        ///
        /// # Safety
        /// Each method is called with the arguments a program passed to the function of its name.
        pub trait Driver {
            $($(
                unsafe fn $function($($arg: $ty),*) -> ze_result_t {
                    let _ = ($($arg,)*);
                    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
                }
            )*)*
            $($(
                unsafe fn $xfunction($($xarg: $xty),*) -> ze_result_t {
                    let _ = ($($xarg,)*);
                    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
                }
            )*)*
        }

        /// The C entry points of a driver's methods.
        mod thunks {
            use super::*;
            $($(
                pub unsafe extern "C" fn $function<D: Driver>($($arg: $ty),*) -> ze_result_t {
                    // SAFETY: the caller passed what the function takes.
                    guard(|| unsafe { D::$function($($arg),*) })
                }
            )*)*
            $($(
                pub unsafe extern "C" fn $xfunction<D: Driver>($($xarg: $xty),*) -> ze_result_t {
                    // SAFETY: as above.
                    guard(|| unsafe { D::$xfunction($($xarg),*) })
                }
            )*)*
        }

        $(
            impl DriverTable for $struct {
                fn of<D: Driver>() -> Self {
                    $struct { $( $slot: Some(thunks::$function::<D>), )* }
                }
            }
        )*

        /// The extensions whose functions `extension_function` knows, by name.
        pub const EXTENSIONS: &[&str] = &[$(stringify!($extension)),*];

        /// The entry point of extension function `name` of driver `D`, with its extension's name.
        pub fn extension_function<D: Driver>(name: &CStr) -> Option<(&'static str, *mut c_void)> {
            let name = name.to_bytes();
            $($(
                if name == stringify!($xfunction).as_bytes() {
                    let function: crate::pfn::$xfunction = thunks::$xfunction::<D>;
                    return Some((stringify!($extension), function as *mut c_void));
                }
            )*)*
            None
        }
    };
}

ze_api!(define_driver);

/// Fills `table` with driver `D`'s functions, for a `zeGet*ProcAddrTable` export.
///
/// # Safety
/// `table` is null or points to a table of type `T`.
pub unsafe fn give_table<D: Driver, T: DriverTable>(version: ze_api_version_t, table: *mut T) -> ze_result_t {
    guard(|| {
        if table.is_null() {
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        }
        if version >> 16 != 1 {
            return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
        }
        // SAFETY: the loader passes its table of this type.
        unsafe { table.write(T::of::<D>()) };
        ZE_RESULT_SUCCESS
    })
}

/// Clears a table of `SLOTS` functions the driver does not implement (tools, sysman).
///
/// # Safety
/// `table` is null or points to a table of `SLOTS` function pointers.
pub unsafe fn give_empty_table<const SLOTS: usize>(version: ze_api_version_t, table: *mut [usize; SLOTS]) -> ze_result_t {
    if table.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    if version >> 16 != 1 {
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    }
    // SAFETY: as documented; null function pointers mean "not implemented" to the loader.
    unsafe { table.write([0; SLOTS]) };
    ZE_RESULT_SUCCESS
}

/// Exports, from a driver library, the `zeGet*ProcAddrTable` functions for driver type `$driver`
/// (which implements `ze_sys::driver::Driver`), and empty tools (`zet`) and sysman (`zes`) tables,
/// which loader 1.8 requires of every driver.
#[macro_export]
macro_rules! export_driver {
    ($driver:ty) => {
        $crate::ze_api!($crate::__export_tables, $driver);
        $crate::__export_empty_tables!(
            zetGetDeviceProcAddrTable 1, zetGetContextProcAddrTable 1, zetGetCommandListProcAddrTable 4,
            zetGetModuleProcAddrTable 1, zetGetKernelProcAddrTable 1, zetGetMetricGroupProcAddrTable 3,
            zetGetMetricGroupExpProcAddrTable 1, zetGetMetricProcAddrTable 2, zetGetMetricStreamerProcAddrTable 3,
            zetGetMetricQueryPoolProcAddrTable 2, zetGetMetricQueryProcAddrTable 4, zetGetTracerExpProcAddrTable 5,
            zetGetDebugProcAddrTable 11,
            zesGetDriverProcAddrTable 2, zesGetDeviceProcAddrTable 29, zesGetSchedulerProcAddrTable 8,
            zesGetPerformanceFactorProcAddrTable 3, zesGetPowerProcAddrTable 8, zesGetFrequencyProcAddrTable 17,
            zesGetEngineProcAddrTable 2, zesGetStandbyProcAddrTable 3, zesGetFirmwareProcAddrTable 2,
            zesGetMemoryProcAddrTable 3, zesGetFabricPortProcAddrTable 6, zesGetTemperatureProcAddrTable 4,
            zesGetPsuProcAddrTable 2, zesGetFanProcAddrTable 6, zesGetLedProcAddrTable 4, zesGetRasProcAddrTable 4,
            zesGetDiagnosticsProcAddrTable 3
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export_tables {
    ([$driver:ty]
     tables { $( $table:ident $getter:ident $struct:ident { $($functions:tt)* } )* }
     extensions { $($extensions:tt)* }
    ) => {
        $(
            /// # Safety
            /// Called by the Level Zero loader with one of its tables.
            #[no_mangle]
            pub unsafe extern "C" fn $getter(version: $crate::ze_api_version_t, table: *mut $crate::$struct) -> $crate::ze_result_t {
                // SAFETY: the loader passes a table of this type.
                unsafe { $crate::driver::give_table::<$driver, $crate::$struct>(version, table) }
            }
        )*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export_empty_tables {
    ($($getter:ident $slots:literal),* $(,)?) => {$(
        /// # Safety
        /// Called by the Level Zero loader with one of its tables.
        #[no_mangle]
        pub unsafe extern "C" fn $getter(version: $crate::ze_api_version_t, table: *mut [usize; $slots]) -> $crate::ze_result_t {
            // SAFETY: the loader passes a table of this many slots.
            unsafe { $crate::driver::give_empty_table(version, table) }
        }
    )*};
}
