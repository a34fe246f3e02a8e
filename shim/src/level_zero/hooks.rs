//! Every Level Zero function, hooked three ways from the one description in `ze_sys::ze_api!`:
//!
//! - `exported`: the function under its own name, for direct calls and `dlsym` (found as
//!   `interpose::Hook` says);
//! - `through_table`: the entries the shim puts into the loader's dispatch tables, which the
//!   `zeGet*ProcAddrTable` hooks patch as the caller receives them (SYCL's Unified Runtime and
//!   Intel's PTI reach ze* functions that way; so does the loader itself, whose own calls to its
//!   getters go through its PLT), each forwarding to the entry it replaced;
//! - `extension`: the extension functions, whose hooks `zeDriverGetExtensionFunctionAddress`
//!   hands out in place of the driver's.
//!
//! Each runs the method of the same name of `Record` for `Shim` (`recording`), which by default
//! only forwards the call.

#![allow(non_snake_case, clippy::too_many_arguments)]

use super::recording::Shim;
use super::Recorded;
use crate::entry::Forward;
use crate::interpose::Hook;
use std::ffi::{c_void, CStr};
use ze_sys::*;

/// `name` (a function name with its NUL) as a C string.
const fn c_name(name: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(name.as_bytes()) {
        Ok(name) => name,
        Err(_) => panic!("function names are C identifiers"),
    }
}

/// The loader defines `zeInit`; drivers and layers export only their getters, which the loader
/// looks up with `dlsym` and must get as they are.
const LOADER_SYMBOL: &CStr = c"zeInit";

/// What a hook returns when no real function exists anywhere in the process.
const NOT_FOUND: ze_result_t = ZE_RESULT_ERROR_UNINITIALIZED;

macro_rules! define_hooks {
    ([]
     tables { $( $table:ident $getter:ident $struct:ident { $( $slot:ident => $function:ident($($arg:ident: $ty:ty),*); )* } )* }
     extensions { $( $extension:ident { $( $xfunction:ident($($xarg:ident: $xty:ty),*); )* } )* }
    ) => {
        /// How the shim records each function: by default it only forwards the call.
        ///
        /// # Safety
        /// Each method is called with the arguments the program passed to its function.
        pub trait Record {
            $($(
                unsafe fn $function(forward: &mut Forward<'_, ze_result_t>, _args: args::$function) -> Recorded {
                    forward.call();
                    Ok(())
                }
            )*)*
            $($(
                unsafe fn $xfunction(forward: &mut Forward<'_, ze_result_t>, _args: args::$xfunction) -> Recorded {
                    forward.call();
                    Ok(())
                }
            )*)*
        }

        /// Each function's arguments as a tuple, which the recording functions destructure: the
        /// signatures are written once, in `ze_api!`.
        pub mod args {
            $($( pub type $function = ($($ty,)*); )*)*
            $($( pub type $xfunction = ($($xty,)*); )*)*
        }

        /// The functions under their own names, and the dispatch table getters.
        pub mod exported {
            use super::*;
            $($(
                /// # Safety
                /// As the Level Zero function of this name.
                #[no_mangle]
                pub unsafe extern "C" fn $function($($arg: $ty),*) -> ze_result_t {
                    let real = || match slots::$function.real().or_else(|| slots::$function.real_in_loaded_libraries()) {
                        // SAFETY: an address found under this function's name has its type.
                        Some(address) => unsafe { std::mem::transmute::<usize, pfn::$function>(address)($($arg),*) },
                        None => NOT_FOUND,
                    };
                    crate::entry::intercept(stringify!($function), &real, |forward| unsafe { <Shim as Record>::$function(forward, ($($arg,)*)) })
                }
            )*)*

            $(
                /// # Safety
                /// As the loader's function of this name. The table the caller receives holds the
                /// shim's entries, each forwarding to the one it replaced. Patching does not go
                /// through `intercept`: the loader asks for its tables inside calls the shim forwards.
                #[no_mangle]
                pub unsafe extern "C" fn $getter(version: ze_api_version_t, table: *mut $struct) -> ze_result_t {
                    let result = match slots::$getter.real().or_else(|| slots::$getter.real_in_loaded_libraries()) {
                        // SAFETY: the loader's getter of this name and type.
                        Some(address) => unsafe {
                            std::mem::transmute::<usize, unsafe extern "C" fn(ze_api_version_t, *mut $struct) -> ze_result_t>(address)(version, table)
                        },
                        None => NOT_FOUND,
                    };
                    if result == ZE_RESULT_SUCCESS && !table.is_null() && crate::entry::recording() {
                        // SAFETY: the getter filled the caller's table of this type.
                        let table = unsafe { &mut *table };
                        $(
                            let ours: pfn::$function = super::through_table::$function;
                            if let Some(original) = table.$slot {
                                if super::through_table::slots::$function.forward_to(original as *const c_void) {
                                    table.$slot = Some(ours);
                                }
                            }
                        )*
                    }
                    result
                }
            )*

            #[allow(non_upper_case_globals)]
            pub mod slots {
                use super::*;
                $($(
                    pub static $function: Hook = Hook::new(c_name(concat!(stringify!($function), "\0")), super::$function as *const c_void);
                )*)*
                $(
                    pub static $getter: Hook = Hook::new(c_name(concat!(stringify!($getter), "\0")), super::$getter as *const c_void).beside(LOADER_SYMBOL);
                )*
            }

            /// Every exported hook, for the exported `dlsym`.
            pub static HOOKS: &[&Hook] = &[$($(&slots::$function,)*)* $(&slots::$getter,)*];
        }

        /// The shim's entries of the loader's dispatch tables.
        pub mod through_table {
            use super::*;
            $($(
                pub unsafe extern "C" fn $function($($arg: $ty),*) -> ze_result_t {
                    let address = slots::$function.real().or_else(|| super::exported::slots::$function.real());
                    let real = || match address {
                        // SAFETY: the table entry this one replaced, of this function's type.
                        Some(address) => unsafe { std::mem::transmute::<usize, pfn::$function>(address)($($arg),*) },
                        None => NOT_FOUND,
                    };
                    crate::entry::intercept(stringify!($function), &real, |forward| unsafe { <Shim as Record>::$function(forward, ($($arg,)*)) })
                }
            )*)*

            #[allow(non_upper_case_globals)]
            pub mod slots {
                use super::*;
                $($(
                    pub static $function: Hook = Hook::forwarding(c_name(concat!(stringify!($function), "\0")), super::$function as *const c_void);
                )*)*
            }
        }

        /// The shim's extension functions.
        pub mod extension {
            use super::*;
            $($(
                pub unsafe extern "C" fn $xfunction($($xarg: $xty),*) -> ze_result_t {
                    let real = || match slots::$xfunction.real() {
                        // SAFETY: the driver gave this address for this function.
                        Some(address) => unsafe { std::mem::transmute::<usize, pfn::$xfunction>(address)($($xarg),*) },
                        None => NOT_FOUND,
                    };
                    crate::entry::intercept(stringify!($xfunction), &real, |forward| unsafe { <Shim as Record>::$xfunction(forward, ($($xarg,)*)) })
                }
            )*)*

            #[allow(non_upper_case_globals)]
            mod slots {
                use super::*;
                $($(
                    pub static $xfunction: Hook = Hook::forwarding(c_name(concat!(stringify!($xfunction), "\0")), super::$xfunction as *const c_void);
                )*)*
            }

            /// The shim's hook for extension function `name`, forwarding to `address` (what the
            /// driver gave); `None` for a function the shim does not know.
            pub fn substitute(name: &CStr, address: *mut c_void) -> Option<*mut c_void> {
                $($(
                    if name == c_name(concat!(stringify!($xfunction), "\0")) {
                        return slots::$xfunction.forward_to(address).then(|| slots::$xfunction.address());
                    }
                )*)*
                None
            }
        }
    };
}

ze_api!(define_hooks);

pub use exported::HOOKS;
