//! Eager mode: each command enqueued on its recorded queue, waiting on the events of its
//! predecessors (the first ones on the end of the previous submission).

use super::api::{check, Api};
use super::objects::MemObject;
use super::extension::Rect;
use super::resolve::{rect_end, resolve, Resolved};
use super::{event_list, OpenClBackend};
use crate::backend::{BackendError, BackendResult, PartitionNodes};
use cl_images::ClImage;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;
use trace_format::{BlobStore, Command, NodeId};

impl OpenClBackend {
    pub(super) fn enqueue_partition(&mut self, part: &PartitionNodes<'_>, blobs: &BlobStore) -> BackendResult<()> {
        let (predecessors, has_successor) = part.links();
        let mut events: Vec<cl_event> = Vec::with_capacity(part.nodes.len());
        let mut waits: Vec<cl_event> = Vec::new();
        let mut outcome = Ok(());
        for (index, &(id, node)) in part.nodes.iter().enumerate() {
            waits.clear();
            if predecessors[index].is_empty() {
                waits.extend_from_slice(&self.tail);
            } else {
                waits.extend(predecessors[index].iter().map(|&p| events[p]));
            }
            let queue = self.objects().map(|objects| objects.queue_of(node.queue));
            match queue.and_then(|queue| self.enqueue_command(id, &node.command, queue, &waits, blobs)) {
                Ok((event, received)) => {
                    events.push(event);
                    self.received.extend(received.map(|data| (id, data)));
                }
                Err(error) => {
                    outcome = Err(error);
                    break;
                }
            }
        }
        // On failure every enqueued event ends the submission, so `finish` still waits for them.
        let ends = events.iter().enumerate().filter(|&(i, _)| outcome.is_err() || !has_successor[i]).map(|(_, &e)| e);
        let tail: Vec<cl_event> = ends.collect();
        for (index, &event) in events.iter().enumerate() {
            let (id, node) = part.nodes[index];
            let queue = node.queue.map_or(self.objects()?.queues.len(), |q| q.index());
            self.keep_for_profile(id, queue, event)?;
            if !tail.contains(&event) {
                unsafe { (self.api.clReleaseEvent)(event) };
            }
        }
        self.replace_tail(tail);
        outcome
    }

    /// Enqueues one command on `queue` after `waits`; returns its event, and for a read the
    /// data it delivered (reads block).
    fn enqueue_command(
        &self,
        node: NodeId,
        command: &Command,
        queue: cl_command_queue,
        waits: &[cl_event],
        blobs: &BlobStore,
    ) -> BackendResult<(cl_event, Option<Vec<u8>>)> {
        let api = self.api;
        let objects = self.objects()?;
        let (count, list) = event_list(waits);
        let mut event: cl_event = ptr::null_mut();
        let mut received = None;
        let (code, call) = match resolve(objects, node, command, None)? {
            Resolved::Kernel { kernel, args, range } => {
                // The enqueue takes the arguments as they are set now.
                for (index, arg) in args.iter().enumerate() {
                    objects.set_arg(kernel, index as u32, arg).map_err(|e| e.about(&format!("node {node}")))?;
                }
                let code = unsafe {
                    (api.clEnqueueNDRangeKernel)(queue, kernel, range.dims, range.offset.as_ptr(), range.global.as_ptr(), range.local_ptr(), count, list, &mut event)
                };
                (code, "clEnqueueNDRangeKernel")
            }
            Resolved::Copy { src, dst, src_offset, dst_offset, bytes } => (
                unsafe { (api.clEnqueueCopyBuffer)(queue, src, dst, src_offset, dst_offset, bytes, count, list, &mut event) },
                "clEnqueueCopyBuffer",
            ),
            Resolved::CopyRect { src, dst, rect } => {
                let [srp, ssp, drp, dsp] = rect.pitches;
                let code = unsafe {
                    (api.clEnqueueCopyBufferRect)(queue, src, dst, rect.src_origin.as_ptr(), rect.dst_origin.as_ptr(), rect.region.as_ptr(), srp, ssp, drp, dsp, count, list, &mut event)
                };
                (code, "clEnqueueCopyBufferRect")
            }
            Resolved::SvmCopy { dst, src, bytes, calls } => (unsafe { (calls.copy)(queue, CL_FALSE, dst, src, bytes, count, list, &mut event) }, calls.names[0]),
            Resolved::Fill { mem, offset, bytes, pattern } => (
                unsafe { (api.clEnqueueFillBuffer)(queue, mem, pattern.as_ptr() as *const c_void, pattern.len(), offset, bytes, count, list, &mut event) },
                "clEnqueueFillBuffer",
            ),
            Resolved::SvmFill { pointer, bytes, pattern, calls } => (
                unsafe { (calls.fill)(queue, pointer, pattern.as_ptr() as *const c_void, pattern.len(), bytes, count, list, &mut event) },
                calls.names[1],
            ),
            Resolved::CopyImage { src, dst, src_origin, dst_origin, region } => (
                unsafe { (api.clEnqueueCopyImage)(queue, src, dst, src_origin.as_ptr(), dst_origin.as_ptr(), region.as_ptr(), count, list, &mut event) },
                "clEnqueueCopyImage",
            ),
            Resolved::CopyImageToBuffer { src, dst, src_origin, region, dst_offset } => (
                unsafe { (api.clEnqueueCopyImageToBuffer)(queue, src, dst, src_origin.as_ptr(), region.as_ptr(), dst_offset, count, list, &mut event) },
                "clEnqueueCopyImageToBuffer",
            ),
            Resolved::CopyBufferToImage { src, dst, src_offset, dst_origin, region } => (
                unsafe { (api.clEnqueueCopyBufferToImage)(queue, src, dst, src_offset, dst_origin.as_ptr(), region.as_ptr(), count, list, &mut event) },
                "clEnqueueCopyBufferToImage",
            ),
            Resolved::FillImage { mem, color, origin, region } => (
                unsafe { (api.clEnqueueFillImage)(queue, mem, color.as_ptr() as *const c_void, origin.as_ptr(), region.as_ptr(), count, list, &mut event) },
                "clEnqueueFillImage",
            ),
            Resolved::Write { target, offset, bytes, data, rect } => {
                let mut data = blobs.get(data).map_err(|e| BackendError::Unsupported(format!("node {node}: {e}")))?.to_vec();
                write_fits(node, data.len(), bytes, rect.as_ref())?;
                objects.relocation.to_replay(&mut data);
                // Blocking: the blob's bytes need not outlive this call.
                let host = data.as_ptr() as *mut c_void;
                (self.host_transfer(queue, target, offset, bytes, rect.as_ref(), host, true, waits, &mut event), "clEnqueueWrite*")
            }
            Resolved::Read { source, offset, bytes, rect } => {
                // A rectangle lands packed, so what is allocated is no larger than the (checked)
                // region of device memory it comes from.
                let rect = rect.map(packed_on_host);
                let needed = rect.as_ref().map_or(bytes, |r| r.region.iter().product());
                let mut landed = vec![0u8; needed];
                let host = landed.as_mut_ptr() as *mut c_void;
                let code = self.host_transfer(queue, source, offset, bytes, rect.as_ref(), host, false, waits, &mut event);
                received = Some(landed);
                (code, "clEnqueueRead*")
            }
            Resolved::Barrier => (unsafe { (api.clEnqueueBarrierWithWaitList)(queue, count, list, &mut event) }, "clEnqueueBarrierWithWaitList"),
        };
        check(code, call).map_err(|e| e.about(&format!("node {node}")))?;
        Ok((event, received))
    }

    /// A blocking read or write between `host` and `object`; for a rectangle the memory side
    /// is the destination of a write and the source of a read.
    #[allow(clippy::too_many_arguments)]
    fn host_transfer(&self, queue: cl_command_queue, object: MemObject, offset: usize, bytes: usize, rect: Option<&Rect>, host: *mut c_void, write: bool, waits: &[cl_event], event: &mut cl_event) -> cl_int {
        let api = self.api;
        let (count, list) = event_list(waits);
        match (object, rect) {
            (MemObject::Buffer { mem, .. }, Some(r)) => {
                let [srp, ssp, drp, dsp] = r.pitches;
                unsafe {
                    if write {
                        (api.clEnqueueWriteBufferRect)(queue, mem, CL_TRUE, r.dst_origin.as_ptr(), r.src_origin.as_ptr(), r.region.as_ptr(), drp, dsp, srp, ssp, host, count, list, event)
                    } else {
                        (api.clEnqueueReadBufferRect)(queue, mem, CL_TRUE, r.src_origin.as_ptr(), r.dst_origin.as_ptr(), r.region.as_ptr(), srp, ssp, drp, dsp, host, count, list, event)
                    }
                }
            }
            (MemObject::Buffer { mem, .. }, None) => unsafe {
                if write {
                    (api.clEnqueueWriteBuffer)(queue, mem, CL_TRUE, offset, bytes, host, count, list, event)
                } else {
                    (api.clEnqueueReadBuffer)(queue, mem, CL_TRUE, offset, bytes, host, count, list, event)
                }
            },
            (MemObject::Image { mem, image, .. }, Some(r)) => image_transfer(api, queue, mem, &image, r, host, write, (count, list), event),
            (MemObject::Image { .. }, None) => CL_INVALID_OPERATION,
            (MemObject::Svm { pointer, calls, .. }, _) => unsafe {
                let device = (pointer as *mut u8).add(offset) as *mut c_void;
                let (dst, src) = if write { (device, host as *const c_void) } else { (host, device as *const c_void) };
                (calls.copy)(queue, CL_TRUE, dst, src, bytes, count, list, event)
            },
        }
    }
}

/// A blocking read or write of the texels `rect` names (the image side is its destination for
/// a write, its source for a read; `resolve` checked it is whole texels).
#[allow(clippy::too_many_arguments)]
fn image_transfer(api: &Api, queue: cl_command_queue, mem: cl_mem, image: &ClImage, r: &Rect, host: *mut c_void, write: bool, (count, list): (cl_uint, *const cl_event), event: &mut cl_event) -> cl_int {
    let [srp, ssp, drp, dsp] = r.pitches;
    let (image_origin, host_origin, [host_row, host_slice]) = match write {
        true => (r.dst_origin, r.src_origin, [srp, ssp]),
        false => (r.src_origin, r.dst_origin, [drp, dsp]),
    };
    let wide = |v: [usize; 3]| v.map(|x| x as u64);
    let Some((origin, region)) = image.to_texels(wide(image_origin), wide(r.region)) else { return CL_INVALID_VALUE };
    let (row_pitch, slice_pitch) = image.api_host_pitches(host_row as u64, host_slice as u64);
    // The host side starts at its origin: the API's host pointer is that byte.
    let host = unsafe { (host as *mut u8).add(host_origin[0] + host_origin[1] * host_row + host_origin[2] * host_slice) } as *mut c_void;
    unsafe {
        match write {
            true => (api.clEnqueueWriteImage)(queue, mem, CL_TRUE, origin.as_ptr(), region.as_ptr(), row_pitch, slice_pitch, host, count, list, event),
            false => (api.clEnqueueReadImage)(queue, mem, CL_TRUE, origin.as_ptr(), region.as_ptr(), row_pitch, slice_pitch, host, count, list, event),
        }
    }
}

/// `rect` with its destination (the host side of a read) packed from offset 0.
fn packed_on_host(rect: Rect) -> Rect {
    let [width, height, _] = rect.region;
    Rect { dst_origin: [0; 3], pitches: [rect.pitches[0], rect.pitches[1], width, width * height], ..rect }
}

/// Checks that `available` recorded bytes hold a write of `bytes` (or of `rect`'s host side).
fn write_fits(node: NodeId, available: usize, bytes: usize, rect: Option<&Rect>) -> BackendResult<()> {
    let needed = rect.map_or(Some(bytes as u64), |r| rect_end(r.src_origin, r.region, [r.pitches[0], r.pitches[1]]));
    match needed {
        Some(needed) if needed <= available as u64 => Ok(()),
        _ => Err(BackendError::Unsupported(format!("node {node}: the recorded host data ({available} bytes) is smaller than the transfer"))),
    }
}
