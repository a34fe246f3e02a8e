//! `clEnqueueFillImage`'s fill color (four floats, ints or uints, by channel type) as the bytes
//! of one texel, which the trace's fill repeats, and back. Only formats whose conversion is
//! exact both ways are converted: a normalized texel read back as a float converts to itself.
//! Texels are little-endian, as on every device these runtimes drive.

use opencl_sys::*;

/// Where each stored channel of `order` comes from in the four components of a color.
fn components(order: u32) -> Option<&'static [usize]> {
    Some(match order {
        CL_R => &[0],
        CL_A => &[3],
        CL_RG => &[0, 1],
        CL_RGBA => &[0, 1, 2, 3],
        CL_BGRA => &[2, 1, 0, 3],
        _ => return None,
    })
}

/// Bytes of one channel of `data_type`, for the types converted here.
fn channel_bytes(data_type: u32) -> Option<usize> {
    Some(match data_type {
        CL_UNORM_INT8 | CL_SIGNED_INT8 | CL_UNSIGNED_INT8 => 1,
        CL_UNORM_INT16 | CL_SIGNED_INT16 | CL_UNSIGNED_INT16 => 2,
        CL_FLOAT | CL_SIGNED_INT32 | CL_UNSIGNED_INT32 => 4,
        _ => return None,
    })
}

/// Component `index` of a 16-byte color.
fn component(color: &[u8; 16], index: usize) -> [u8; 4] {
    let mut bytes = [0u8; 4];
    bytes.copy_from_slice(&color[index * 4..index * 4 + 4]);
    bytes
}

/// One channel's stored bytes for a color component: integers keep their low bytes (the API
/// saturates; `fill_color` gives back colors that need none).
fn store(data_type: u32, value: [u8; 4]) -> Vec<u8> {
    let unorm = |scale: f32| (f32::from_ne_bytes(value).clamp(0.0, 1.0) * scale).round() as u32;
    let stored = match data_type {
        CL_UNORM_INT8 => unorm(255.0),
        CL_UNORM_INT16 => unorm(65535.0),
        _ => u32::from_ne_bytes(value),
    };
    stored.to_le_bytes()[..channel_bytes(data_type).unwrap_or(4)].to_vec()
}

/// A color component from one channel's stored bytes.
fn load(data_type: u32, stored: &[u8]) -> [u8; 4] {
    let mut wide = [0u8; 8];
    wide[..stored.len()].copy_from_slice(stored);
    let unsigned = u64::from_le_bytes(wide) as u32;
    let signed = |bits: u32| ((unsigned << (32 - bits)) as i32 >> (32 - bits)).to_ne_bytes();
    match data_type {
        CL_UNORM_INT8 => (unsigned as f32 / 255.0).to_ne_bytes(),
        CL_UNORM_INT16 => (unsigned as f32 / 65535.0).to_ne_bytes(),
        CL_SIGNED_INT8 => signed(8),
        CL_SIGNED_INT16 => signed(16),
        _ => unsigned.to_ne_bytes(),
    }
}

/// The texel a fill with `color` stores in an image of this format; `None` for formats not
/// converted here.
pub fn fill_texel(order: u32, data_type: u32, color: &[u8; 16]) -> Option<Vec<u8>> {
    let (components, _) = (components(order)?, channel_bytes(data_type)?);
    Some(components.iter().flat_map(|&index| store(data_type, component(color, index))).collect())
}

/// A fill color that stores `texel`; `None` for formats not converted here or a texel of
/// another size.
pub fn fill_color(order: u32, data_type: u32, texel: &[u8]) -> Option<[u8; 16]> {
    let (components, bytes) = (components(order)?, channel_bytes(data_type)?);
    if texel.len() != components.len() * bytes {
        return None;
    }
    let mut color = [0u8; 16];
    for (channel, &index) in texel.chunks_exact(bytes).zip(components) {
        color[index * 4..index * 4 + 4].copy_from_slice(&load(data_type, channel));
    }
    Some(color)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(values: [f32; 4]) -> [u8; 16] {
        let mut color = [0u8; 16];
        for (index, value) in values.iter().enumerate() {
            color[index * 4..index * 4 + 4].copy_from_slice(&value.to_ne_bytes());
        }
        color
    }

    #[test]
    fn colors_become_texels_in_channel_order() {
        let color = floats([0.25, 0.5, 0.75, 1.0]);
        let texel = fill_texel(CL_RGBA, CL_FLOAT, &color).expect("a float format");
        assert_eq!(texel, color.to_vec());
        assert_eq!(fill_texel(CL_BGRA, CL_UNORM_INT8, &color), Some(vec![191, 128, 64, 255]));
        assert_eq!(fill_texel(CL_R, CL_UNORM_INT16, &color), Some(vec![0x00, 0x40]));
        let ints = [(-2i32).to_ne_bytes(), 7i32.to_ne_bytes(), [0; 4], [0; 4]].concat();
        assert_eq!(fill_texel(CL_RG, CL_SIGNED_INT8, &ints.clone().try_into().expect("16 bytes")), Some(vec![0xfe, 7]));
        assert_eq!(fill_texel(CL_RGBA, CL_HALF_FLOAT, &color), None, "half floats are not converted");
    }

    #[test]
    fn texels_give_back_a_color_that_stores_them() {
        for (order, data_type, texel) in [
            (CL_BGRA, CL_UNORM_INT8, vec![191u8, 128, 64, 255]),
            (CL_RG, CL_SIGNED_INT8, vec![0xfe, 7]),
            (CL_R, CL_SIGNED_INT16, vec![0x00, 0x80]),
            (CL_RGBA, CL_UNSIGNED_INT32, (0u8..16).collect()),
            (CL_A, CL_UNORM_INT16, vec![0x34, 0x12]),
        ] {
            let color = fill_color(order, data_type, &texel).expect("a converted format");
            assert_eq!(fill_texel(order, data_type, &color), Some(texel), "{order:#x} {data_type:#x}");
        }
        assert_eq!(fill_color(CL_RGBA, CL_FLOAT, &[0; 8]), None, "a texel of another size");
    }
}
