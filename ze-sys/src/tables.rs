//! The loader's dispatch tables (`ze_*_dditable_t`) and the pointer type of every function
//! (`pfn::zeFunctionName`), derived from the description in `api`.

macro_rules! define_tables {
    ([]
     tables { $( $table:ident $getter:ident $struct:ident { $( $slot:ident => $function:ident($($arg:ident: $ty:ty),*); )* } )* }
     extensions { $( $extension:ident { $( $xfunction:ident($($xarg:ident: $xty:ty),*); )* } )* }
    ) => {
        /// The pointer type of each function, named as the function.
        pub mod pfn {
            $($( pub type $function = unsafe extern "C" fn($($ty),*) -> $crate::ze_result_t; )*)*
            $($( pub type $xfunction = unsafe extern "C" fn($($xty),*) -> $crate::ze_result_t; )*)*
        }

        $(
            #[doc = concat!("The ", stringify!($table), " dispatch table, as `", stringify!($getter), "` fills it.")]
            #[repr(C)]
            #[derive(Clone, Copy, Default)]
            pub struct $struct { $( pub $slot: Option<pfn::$function>, )* }
        )*

        /// Name, size and slot offsets of each table, for the layout tests.
        #[cfg(test)]
        pub(crate) const TABLE_LAYOUTS: &[crate::structs::Layout] = &[
            $( (stringify!($struct), std::mem::size_of::<$struct>(), &[ $( (stringify!($slot), std::mem::offset_of!($struct, $slot)) ),* ]) ),*
        ];
    };
}

ze_api!(define_tables);
