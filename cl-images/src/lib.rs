//! OpenCL images as the trace keeps them: contents packed (`ImageLayout`), copies naming texels
//! by packed byte positions. The shim turns the API's texel origins, regions and host pitches
//! into those; the replayer turns them back.
//!
//! An image's `ImageLayout::format` is `[image_type, channel_order, channel_data_type, width,
//! height, depth, array_size]` as `cl_image_format` and `cl_image_desc` give them. Its packed
//! rows and slices follow the API's own coordinates: a 1D image array's layers are rows (the API
//! addresses a layer by `origin[1]`), a 2D image array's layers are slices (`origin[2]`).

mod fill;

pub use fill::{fill_color, fill_texel};

use opencl_sys::{
    cl_mem_object_type, CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D,
};
use trace_format::ImageLayout;

/// An OpenCL image's description and texel size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClImage {
    pub image_type: cl_mem_object_type,
    pub channel_order: u32,
    pub channel_data_type: u32,
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub array_size: u64,
    pub texel_bytes: u32,
}

impl ClImage {
    /// Packed rows per slice and slices, as the module documentation lays them out; `None` for
    /// a type that is no image.
    fn rows_and_slices(&self) -> Option<(u64, u64)> {
        Some(match self.image_type {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => (1, 1),
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (self.array_size, 1),
            CL_MEM_OBJECT_IMAGE2D => (self.height, 1),
            CL_MEM_OBJECT_IMAGE2D_ARRAY => (self.height, self.array_size),
            CL_MEM_OBJECT_IMAGE3D => (self.height, self.depth),
            _ => return None,
        })
    }

    /// The trace's layout of this image; `None` for an unknown type or an empty image.
    pub fn layout(&self) -> Option<ImageLayout> {
        let (height, depth) = self.rows_and_slices()?;
        let format = vec![
            u64::from(self.image_type),
            u64::from(self.channel_order),
            u64::from(self.channel_data_type),
            self.width,
            self.height,
            self.depth,
            self.array_size,
        ];
        let layout = ImageLayout { width: self.width, height, depth, texel_bytes: self.texel_bytes, format };
        (layout.bytes() > 0).then_some(layout)
    }

    /// The image a layout was recorded from; `None` when its format is not an OpenCL image's.
    pub fn from_layout(layout: &ImageLayout) -> Option<ClImage> {
        let &[image_type, channel_order, channel_data_type, width, height, depth, array_size] = layout.format.as_slice() else { return None };
        let narrow = |value: u64| u32::try_from(value).ok();
        let image = ClImage {
            image_type: narrow(image_type)?,
            channel_order: narrow(channel_order)?,
            channel_data_type: narrow(channel_data_type)?,
            width,
            height,
            depth,
            array_size,
            texel_bytes: layout.texel_bytes,
        };
        // A layout that disagrees with its own format would make copies land elsewhere.
        (image.layout().as_ref() == Some(layout)).then_some(image)
    }

    /// The API region of the whole image, in texels (rows, layers).
    pub fn whole_region(&self) -> [u64; 3] {
        let (rows, slices) = self.rows_and_slices().unwrap_or((1, 1));
        [self.width, rows, slices]
    }

    /// The packed row and slice pitches (`ImageLayout::row_bytes` and `slice_bytes`).
    pub fn packed_pitches(&self) -> (u64, u64) {
        let [width, rows, _] = self.whole_region();
        let row = width.saturating_mul(u64::from(self.texel_bytes));
        (row, row.saturating_mul(rows))
    }

    /// The API's host pitches of the whole image packed (`clEnqueueReadImage` of all of it).
    pub fn whole_host_pitches(&self) -> (usize, usize) {
        let (row, slice) = self.packed_pitches();
        self.api_host_pitches(row, slice)
    }

    /// An API origin and region in texels as the trace's packed (x in bytes, row, slice).
    pub fn to_packed(&self, origin: [u64; 3], region: [u64; 3]) -> ([u64; 3], [u64; 3]) {
        let bytes = u64::from(self.texel_bytes);
        ([origin[0].saturating_mul(bytes), origin[1], origin[2]], [region[0].saturating_mul(bytes), region[1], region[2]])
    }

    /// A packed origin and region back in texels; `None` unless whole texels inside the image.
    pub fn to_texels(&self, origin: [u64; 3], region: [u64; 3]) -> Option<([usize; 3], [usize; 3])> {
        let bytes = u64::from(self.texel_bytes).max(1);
        if origin[0] % bytes != 0 || region[0] % bytes != 0 {
            return None;
        }
        let origin = [origin[0] / bytes, origin[1], origin[2]];
        let region = [region[0] / bytes, region[1], region[2]];
        let whole = self.whole_region();
        let inside = (0..3).all(|axis| region[axis] > 0 && origin[axis].checked_add(region[axis]).is_some_and(|end| end <= whole[axis]));
        let size = |v: [u64; 3]| v.map(|x| usize::try_from(x).ok());
        match (inside, size(origin), size(region)) {
            (true, [Some(ox), Some(oy), Some(oz)], [Some(rx), Some(ry), Some(rz)]) => Some(([ox, oy, oz], [rx, ry, rz])),
            _ => None,
        }
    }

    /// Host row and slice pitches of an image read or write (`region` in texels; 0 for the
    /// API's defaults) as the packed host side of the trace's rectangle: a 1D array's layers
    /// lie `slice_pitch` apart on the host, and they are its rows.
    pub fn packed_host_pitches(&self, region: [u64; 3], row_pitch: u64, slice_pitch: u64) -> (u64, u64) {
        let row = if row_pitch == 0 { region[0].saturating_mul(u64::from(self.texel_bytes)) } else { row_pitch };
        if self.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            let layer = if slice_pitch == 0 { row } else { slice_pitch };
            return (layer, layer.saturating_mul(region[1]));
        }
        (row, if slice_pitch == 0 { row.saturating_mul(region[1]) } else { slice_pitch })
    }

    /// The trace's host row and slice pitches as the API's `row_pitch` and `slice_pitch` for
    /// this image type (which must be 0 where the type has no such dimension). A 1D array's
    /// layers lie `slice_pitch` apart by the specification, but PoCL 3.1 and Intel's CPU runtime
    /// step them by `row_pitch` (measured: a write of 6 layers with pitches 0 and 48 put them 24
    /// bytes apart): both name the layer pitch.
    pub fn api_host_pitches(&self, row: u64, slice: u64) -> (usize, usize) {
        let size = |value: u64| value as usize;
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => (0, 0),
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (size(row), size(row)),
            CL_MEM_OBJECT_IMAGE2D => (size(row), 0),
            _ => (size(row), size(slice)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencl_sys::{CL_FLOAT, CL_RGBA};

    fn image(image_type: cl_mem_object_type, [width, height, depth, array_size]: [u64; 4]) -> ClImage {
        ClImage { image_type, channel_order: CL_RGBA, channel_data_type: CL_FLOAT, width, height, depth, array_size, texel_bytes: 16 }
    }

    #[test]
    fn layers_of_arrays_are_rows_or_slices_as_the_api_addresses_them() {
        let one_d_array = image(CL_MEM_OBJECT_IMAGE1D_ARRAY, [8, 0, 0, 3]).layout().expect("a layout");
        assert_eq!((one_d_array.width, one_d_array.height, one_d_array.depth), (8, 3, 1));
        assert_eq!((one_d_array.row_bytes(), one_d_array.slice_bytes(), one_d_array.bytes()), (128, 384, 384));
        let two_d_array = image(CL_MEM_OBJECT_IMAGE2D_ARRAY, [8, 4, 0, 3]).layout().expect("a layout");
        assert_eq!((two_d_array.height, two_d_array.depth, two_d_array.bytes()), (4, 3, 8 * 4 * 3 * 16));
        let three_d = image(CL_MEM_OBJECT_IMAGE3D, [8, 4, 2, 0]).layout().expect("a layout");
        assert_eq!((three_d.height, three_d.depth), (4, 2));
        assert_eq!(image(CL_MEM_OBJECT_IMAGE1D, [8, 0, 0, 0]).whole_region(), [8, 1, 1]);
        assert_eq!(image(0x10F0, [8, 1, 1, 0]).layout(), None, "a buffer is no image");
        assert_eq!(image(CL_MEM_OBJECT_IMAGE2D, [0, 4, 0, 0]).layout(), None, "an empty image");
    }

    #[test]
    fn a_layout_gives_back_the_image_it_was_made_from() {
        let made = image(CL_MEM_OBJECT_IMAGE2D_ARRAY, [8, 4, 0, 3]);
        assert_eq!(ClImage::from_layout(&made.layout().expect("a layout")), Some(made));
        let mut altered = made.layout().expect("a layout");
        altered.height = 5;
        assert_eq!(ClImage::from_layout(&altered), None, "rows that disagree with the format");
        altered.format.pop();
        assert_eq!(ClImage::from_layout(&altered), None, "a format of six numbers (a CUDA array's)");
    }

    #[test]
    fn texel_positions_are_packed_bytes_and_back() {
        let image = image(CL_MEM_OBJECT_IMAGE3D, [8, 4, 2, 0]);
        let (origin, region) = image.to_packed([1, 2, 1], [3, 2, 1]);
        assert_eq!((origin, region), ([16, 2, 1], [48, 2, 1]));
        assert_eq!(image.to_texels(origin, region), Some(([1, 2, 1], [3, 2, 1])));
        assert_eq!(image.to_texels([8, 0, 0], [16, 1, 1]), None, "half a texel in");
        assert_eq!(image.to_texels([0, 3, 0], [16, 2, 1]), None, "past the last row");
        assert_eq!(image.to_texels([0, 0, 0], [0, 1, 1]), None, "an empty region");
    }

    #[test]
    fn host_pitches_follow_each_image_type() {
        let two_d = image(CL_MEM_OBJECT_IMAGE2D, [8, 4, 0, 0]);
        assert_eq!(two_d.packed_host_pitches([2, 3, 1], 0, 0), (32, 96));
        assert_eq!(two_d.packed_host_pitches([2, 3, 1], 40, 0), (40, 120));
        assert_eq!(two_d.api_host_pitches(40, 120), (40, 0));
        // A 1D array's layers lie a slice pitch apart on the host: they are the packed rows, and
        // the API gets the layer pitch as both pitches.
        let layers = image(CL_MEM_OBJECT_IMAGE1D_ARRAY, [8, 0, 0, 3]);
        assert_eq!(layers.packed_host_pitches([2, 3, 1], 0, 0), (32, 96));
        assert_eq!(layers.packed_host_pitches([2, 3, 1], 0, 48), (48, 144));
        assert_eq!(layers.api_host_pitches(48, 144), (48, 48));
        let volume = image(CL_MEM_OBJECT_IMAGE3D, [8, 4, 2, 0]);
        assert_eq!(volume.api_host_pitches(128, 512), (128, 512));
        assert_eq!(volume.whole_host_pitches(), (128, 512));
        assert_eq!(layers.whole_host_pitches(), (128, 128));
        assert_eq!(layers.packed_pitches(), (128, 384));
        assert_eq!(image(CL_MEM_OBJECT_IMAGE1D, [8, 0, 0, 0]).api_host_pitches(128, 128), (0, 0));
    }
}
