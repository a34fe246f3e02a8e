//! Device, host and shared allocations (Intel USM on the CPU device), and what the driver knows of
//! each for `zeMemGetAllocProperties` and `zeMemGetAddressRange`.

use crate::common::*;
use crate::device::{check_device, device_handle, Context};
use crate::opencl::{check, runtime};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use ze_sys::*;

struct Allocation {
    size: usize,
    kind: ze_memory_type_t,
    id: u64,
}

/// Every live allocation by base address.
static ALLOCATIONS: Mutex<BTreeMap<usize, Allocation>> = Mutex::new(BTreeMap::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn allocations() -> std::sync::MutexGuard<'static, BTreeMap<usize, Allocation>> {
    ALLOCATIONS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The allocation holding `address`: its base and record.
fn containing(map: &BTreeMap<usize, Allocation>, address: usize) -> Option<(usize, &Allocation)> {
    let (&base, allocation) = map.range(..=address).next_back()?;
    (address < base + allocation.size).then_some((base, allocation))
}

fn allocate(kind: ze_memory_type_t, size: usize, alignment: usize, out: *mut *mut c_void) -> ZeResult<()> {
    let rt = runtime()?;
    if size == 0 {
        return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    }
    if alignment != 0 && !alignment.is_power_of_two() {
        return Err(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    }
    let mut code = 0;
    let alignment = alignment as u32;
    // SAFETY: USM allocation calls on the runtime's context and device.
    let pointer = unsafe {
        match kind {
            ZE_MEMORY_TYPE_HOST => (rt.usm.host_alloc)(rt.context, std::ptr::null(), size, alignment, &mut code),
            ZE_MEMORY_TYPE_DEVICE => (rt.usm.device_alloc)(rt.context, rt.device, std::ptr::null(), size, alignment, &mut code),
            _ => (rt.usm.shared_alloc)(rt.context, rt.device, std::ptr::null(), size, alignment, &mut code),
        }
    };
    check(code)?;
    if pointer.is_null() {
        return Err(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    allocations().insert(pointer as usize, Allocation { size, kind, id });
    // SAFETY: the caller's output pointer (checked by `put`).
    unsafe { put(out, pointer) }
}

pub unsafe fn alloc_device(context: ze_context_handle_t, size: usize, alignment: usize, device: ze_device_handle_t, out: *mut *mut c_void) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    check_device(device)?;
    allocate(ZE_MEMORY_TYPE_DEVICE, size, alignment, out)
}

pub unsafe fn alloc_host(context: ze_context_handle_t, size: usize, alignment: usize, out: *mut *mut c_void) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    allocate(ZE_MEMORY_TYPE_HOST, size, alignment, out)
}

/// `device` may be null: shared memory for any device of the context (there is one).
pub unsafe fn alloc_shared(context: ze_context_handle_t, size: usize, alignment: usize, device: ze_device_handle_t, out: *mut *mut c_void) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    if !device.is_null() {
        check_device(device)?;
    }
    allocate(ZE_MEMORY_TYPE_SHARED, size, alignment, out)
}

pub unsafe fn free(context: ze_context_handle_t, pointer: *mut c_void) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    let rt = runtime()?;
    if allocations().remove(&(pointer as usize)).is_none() {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    // Blocking: work still using the memory ends first, instead of touching freed memory.
    check(unsafe { (rt.usm.blocking_free)(rt.context, pointer) })
}

pub unsafe fn alloc_properties(
    context: ze_context_handle_t,
    pointer: *const c_void,
    properties: *mut ze_memory_allocation_properties_t,
    device: *mut ze_device_handle_t,
) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    let properties = unsafe { properties.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)?;
    let map = allocations();
    let (kind, id) = containing(&map, pointer as usize).map_or((ZE_MEMORY_TYPE_UNKNOWN, 0), |(_, a)| (a.kind, a.id));
    properties.type_ = kind;
    properties.id = id;
    properties.pageSize = 4096;
    if !device.is_null() {
        let owner = if matches!(kind, ZE_MEMORY_TYPE_DEVICE | ZE_MEMORY_TYPE_SHARED) { device_handle() } else { std::ptr::null_mut() };
        unsafe { device.write(owner) };
    }
    Ok(())
}

pub unsafe fn address_range(context: ze_context_handle_t, pointer: *const c_void, base: *mut *mut c_void, size: *mut usize) -> ZeResult<()> {
    unsafe { Context::from_handle(context) }?;
    let map = allocations();
    let (start, allocation) = containing(&map, pointer as usize).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
    unsafe {
        if !base.is_null() {
            base.write(start as *mut c_void);
        }
        if !size.is_null() {
            size.write(allocation.size);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_belongs_to_the_allocation_that_holds_it() {
        let mut map = BTreeMap::new();
        map.insert(0x1000, Allocation { size: 0x100, kind: ZE_MEMORY_TYPE_DEVICE, id: 1 });
        map.insert(0x2000, Allocation { size: 0x10, kind: ZE_MEMORY_TYPE_HOST, id: 2 });
        assert_eq!(containing(&map, 0x1000).map(|(base, a)| (base, a.id)), Some((0x1000, 1)));
        assert_eq!(containing(&map, 0x10ff).map(|(base, a)| (base, a.id)), Some((0x1000, 1)));
        assert!(containing(&map, 0x1100).is_none(), "one past the end");
        assert!(containing(&map, 0xfff).is_none(), "before the first");
        assert_eq!(containing(&map, 0x2008).map(|(base, a)| (base, a.kind)), Some((0x2000, ZE_MEMORY_TYPE_HOST)));
    }
}
