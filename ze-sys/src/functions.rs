//! The caller side, derived from the description in `api`: the loader's exported functions
//! looked up by name (`Functions`), and the extension functions a driver hands out
//! (`ExtensionFunctions`). Each is a method of the same name; one that was not found returns
//! `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`, as the loader does for a function a driver lacks.

use crate::*;
use std::ffi::{c_void, CStr};

/// `name` (a function name) as a C string.
const fn c_name(name: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(name.as_bytes()) {
        Ok(name) => name,
        Err(_) => panic!("function names are C identifiers"),
    }
}

macro_rules! define_functions {
    ([]
     tables { $( $table:ident $getter:ident $struct:ident { $( $slot:ident => $function:ident($($arg:ident: $ty:ty),*); )* } )* }
     extensions { $( $extension:ident { $( $xfunction:ident($($xarg:ident: $xty:ty),*); )* } )* }
    ) => {
        /// The API's functions as a library (the loader) exports them.
        pub struct Functions {
            $($( $function: Option<pfn::$function>, )*)*
        }

        impl Functions {
            /// Finds each function with `find` (a `dlsym` on the loader, say), which returns null
            /// for a name it does not know.
            pub fn load(mut find: impl FnMut(&CStr) -> *mut c_void) -> Functions {
                Functions {
                    $($( $function: {
                        let address = find(c_name(concat!(stringify!($function), "\0")));
                        // SAFETY: an address exported under this name has the function's type.
                        (!address.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, pfn::$function>(address) })
                    }, )*)*
                }
            }

            $($(
                /// # Safety
                /// As the Level Zero function of this name.
                pub unsafe fn $function(&self, $($arg: $ty),*) -> ze_result_t {
                    match self.$function {
                        // SAFETY: as documented.
                        Some(function) => unsafe { function($($arg),*) },
                        None => ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                    }
                }
            )*)*
        }

        /// The extension functions a driver gave through `zeDriverGetExtensionFunctionAddress`.
        pub struct ExtensionFunctions {
            $($( $xfunction: Option<pfn::$xfunction>, )*)*
        }

        impl ExtensionFunctions {
            /// Asks `find` for each extension function (`zeDriverGetExtensionFunctionAddress`).
            pub fn load(mut find: impl FnMut(&CStr) -> *mut c_void) -> ExtensionFunctions {
                ExtensionFunctions {
                    $($( $xfunction: {
                        let address = find(c_name(concat!(stringify!($xfunction), "\0")));
                        // SAFETY: the driver gave this address for this function.
                        (!address.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, pfn::$xfunction>(address) })
                    }, )*)*
                }
            }

            /// Whether every function of extension `name` was found.
            pub fn has(&self, name: &str) -> bool {
                $(
                    if name == stringify!($extension) {
                        return true $( && self.$xfunction.is_some() )*;
                    }
                )*
                false
            }

            $($(
                /// # Safety
                /// As the Level Zero function of this name.
                pub unsafe fn $xfunction(&self, $($xarg: $xty),*) -> ze_result_t {
                    match self.$xfunction {
                        // SAFETY: as documented.
                        Some(function) => unsafe { function($($xarg),*) },
                        None => ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                    }
                }
            )*)*
        }
    };
}

ze_api!(define_functions);
