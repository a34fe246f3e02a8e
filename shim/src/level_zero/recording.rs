//! Which functions the shim records, and how: every other function of `ze_api!` is only
//! forwarded. Functions whose work the shim cannot record go through and mark the trace
//! partial with the reason given here.

#![allow(non_snake_case)]

use super::hooks::{args, Record};
use super::{
    commands, execute, kernels, memory, modules, mutable, queues, sync, unsupported, Recorded,
};
use crate::entry::Forward;
use ze_sys::ze_result_t;

/// The shim's `Record`.
pub struct Shim;

macro_rules! record {
    ($( $function:ident => $how:tt; )*) => {
        impl Record for Shim {
            $(
                unsafe fn $function(forward: &mut Forward<'_, ze_result_t>, arguments: args::$function) -> Recorded {
                    record!(@how $how, $function, forward, arguments)
                }
            )*
        }
    };
    (@how $reason:literal, $function:ident, $forward:ident, $arguments:ident) => {{
        let _ = $arguments;
        unsupported($forward, stringify!($function), $reason)
    }};
    (@how ($($record:ident)::+), $function:ident, $forward:ident, $arguments:ident) => {
        unsafe { $($record)::+($forward, $arguments) }
    };
}

record! {
    zeDriverGetExtensionFunctionAddress => (mutable::extension_address);
    zeContextDestroy => (queues::destroy_context);

    zeMemAllocDevice => (memory::alloc_device);
    zeMemAllocHost => (memory::alloc_host);
    zeMemAllocShared => (memory::alloc_shared);
    zeMemFree => (memory::free);

    zeModuleCreate => (modules::create_module);
    zeModuleDynamicLink => (modules::dynamic_link);
    zeKernelCreate => (modules::create_kernel);
    zeKernelSetArgumentValue => (kernels::set_argument_value);
    zeKernelSetGroupSize => (kernels::set_group_size);
    zeKernelSetGlobalOffsetExp => (kernels::set_global_offset);

    zeCommandQueueCreate => (queues::create_queue);
    zeCommandQueueDestroy => (queues::destroy_queue);
    zeCommandListCreate => (queues::create_list);
    zeCommandListCreateImmediate => (queues::create_immediate);
    zeCommandListReset => (queues::reset_list);
    zeCommandListDestroy => (queues::destroy_list);
    zeCommandQueueExecuteCommandLists => (execute::execute);

    zeCommandListAppendLaunchKernel => (commands::launch);
    zeCommandListAppendLaunchCooperativeKernel => (commands::launch_cooperative);
    zeCommandListAppendMemoryCopy => (commands::memory_copy);
    zeCommandListAppendMemoryCopyRegion => (commands::memory_copy_region);
    zeCommandListAppendMemoryFill => (commands::memory_fill);
    zeCommandListAppendBarrier => (commands::barrier);
    zeCommandListAppendMemoryRangesBarrier => (commands::memory_ranges_barrier);
    zeCommandListAppendWaitOnEvents => (commands::wait_on_events);
    zeCommandListAppendSignalEvent => (commands::signal_event);
    zeCommandListAppendEventReset => (commands::event_reset);
    zeCommandListAppendLaunchKernelIndirect => "launches whose group count the device reads are not recorded";
    zeCommandListAppendLaunchMultipleKernelsIndirect => "launches whose group count the device reads are not recorded";
    zeCommandListAppendWriteGlobalTimestamp => "timestamps written into memory are not recorded";
    zeCommandListAppendQueryKernelTimestamps => "timestamps written into memory are not recorded";
    zeCommandListAppendMemoryCopyFromContext => "copies from another context are not recorded";
    zeCommandListAppendImageCopy => "images are not recorded";
    zeCommandListAppendImageCopyRegion => "images are not recorded";
    zeCommandListAppendImageCopyToMemory => "images are not recorded";
    zeCommandListAppendImageCopyFromMemory => "images are not recorded";

    zeCommandQueueSynchronize => (sync::queue_synchronize);
    zeEventHostSynchronize => (sync::event_synchronize);
    zeEventQueryStatus => (sync::event_query);
    zeFenceHostSynchronize => (sync::fence_synchronize);
    zeFenceQueryStatus => (sync::fence_query);
    zeEventCreate => (sync::event_create);
    zeEventDestroy => (sync::event_destroy);
    zeEventHostSignal => (sync::event_host_signal);
    zeEventHostReset => (sync::event_host_reset);

    zeCommandListGetNextCommandIdExp => (mutable::next_command_id);
    zeCommandListUpdateMutableCommandsExp => (mutable::update_commands);
    zeCommandListUpdateMutableCommandSignalEventExp => (mutable::update_signal_event);
    zeCommandListUpdateMutableCommandWaitEventsExp => (mutable::update_wait_events);
}
