//! Events, made in pools of `POOL_SIZE` as needed and handed out until recycled.

use super::driver::check;
use crate::backend::BackendResult;
use ze_sys::functions::Functions;
use ze_sys::*;

const POOL_SIZE: u32 = 64;

pub struct Events {
    api: &'static Functions,
    context: ze_context_handle_t,
    pools: Vec<ze_event_pool_handle_t>,
    events: Vec<ze_event_handle_t>,
    /// How many of `events` are handed out.
    used: usize,
}

impl Events {
    pub fn new(api: &'static Functions, context: ze_context_handle_t) -> Events {
        Events { api, context, pools: Vec::new(), events: Vec::new(), used: 0 }
    }

    /// An unsignaled event, not handed out since the last `recycle`.
    pub fn take(&mut self) -> BackendResult<ze_event_handle_t> {
        if self.used == self.events.len() {
            self.grow()?;
        }
        self.used += 1;
        Ok(self.events[self.used - 1])
    }

    /// The events handed out since the last `recycle`.
    pub fn used(&self) -> &[ze_event_handle_t] {
        &self.events[..self.used]
    }

    /// Resets the events handed out, which no command waits for or signals any more.
    pub fn recycle(&mut self) -> BackendResult<()> {
        for &event in &self.events[..self.used] {
            // SAFETY: an event of this set.
            check(unsafe { self.api.zeEventHostReset(event) }, "zeEventHostReset")?;
        }
        self.used = 0;
        Ok(())
    }

    fn grow(&mut self) -> BackendResult<()> {
        let desc = ze_event_pool_desc_t { flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE, count: POOL_SIZE, ..ze_event_pool_desc_t::new() };
        let mut pool = std::ptr::null_mut();
        // SAFETY: the backend's context and valid descriptions and out-pointers.
        check(unsafe { self.api.zeEventPoolCreate(self.context, &desc, 0, std::ptr::null_mut(), &mut pool) }, "zeEventPoolCreate")?;
        self.pools.push(pool);
        for index in 0..POOL_SIZE {
            let desc = ze_event_desc_t { index, signal: ZE_EVENT_SCOPE_FLAG_HOST, wait: ZE_EVENT_SCOPE_FLAG_HOST, ..ze_event_desc_t::new() };
            let mut event = std::ptr::null_mut();
            check(unsafe { self.api.zeEventCreate(pool, &desc, &mut event) }, "zeEventCreate")?;
            self.events.push(event);
        }
        Ok(())
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        // SAFETY: handles this set created; failures cannot be reported from drop.
        unsafe {
            for &event in &self.events {
                self.api.zeEventDestroy(event);
            }
            for &pool in &self.pools {
                self.api.zeEventPoolDestroy(pool);
            }
        }
    }
}
