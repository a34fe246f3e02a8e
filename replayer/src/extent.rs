//! The geometry of a copy's sides, which every backend checks the same way: where a side starts,
//! its row and slice pitches (zero meaning packed rows and slices), and how far it reaches.

use trace_format::Extent;

/// One side of a rectangular copy: its origin (bytes, rows, slices) and its effective pitches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RectSide {
    pub origin: [u64; 3],
    pub row_pitch: u64,
    pub slice_pitch: u64,
}

/// The source or destination side of a rectangle (`region[0]` bytes by `region[1]` rows by
/// `region[2]` slices): rows at least `region[0]` bytes apart, slices at least a slice of rows.
/// Saturating: an impossible side fails the bounds checks instead of wrapping past them.
pub fn rect_side(region: [u64; 3], origin: [u64; 3], row_pitch: u64, slice_pitch: u64) -> RectSide {
    let row_pitch = row_pitch.max(region[0]);
    let slice_pitch = slice_pitch.max(row_pitch.saturating_mul(region[1]));
    RectSide { origin, row_pitch, slice_pitch }
}

/// Bytes a copy's source or destination spans from its start address, origins included.
pub fn span(extent: &Extent, source: bool) -> u64 {
    match *extent {
        Extent::Linear { bytes } => bytes,
        Extent::Rect { src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch } => {
            let side = if source {
                rect_side(region, src_origin, src_row_pitch, src_slice_pitch)
            } else {
                rect_side(region, dst_origin, dst_row_pitch, dst_slice_pitch)
            };
            let last_slice = side.origin[2].saturating_add(region[2].max(1) - 1).saturating_mul(side.slice_pitch);
            let last_row = side.origin[1].saturating_add(region[1].max(1) - 1).saturating_mul(side.row_pitch);
            last_slice.saturating_add(last_row).saturating_add(side.origin[0]).saturating_add(region[0])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::span;
    use trace_format::Extent;

    #[test]
    fn a_linear_copy_spans_its_bytes() {
        assert_eq!(span(&Extent::Linear { bytes: 4096 }, true), 4096);
    }

    #[test]
    fn a_rect_copy_spans_from_its_start_to_the_end_of_its_last_row() {
        // 3 slices of 4 rows of 10 bytes at (2, 1, 1) in 16-byte rows and 128-byte slices.
        let extent = Extent::Rect {
            src_origin: [2, 1, 1],
            dst_origin: [0, 0, 0],
            region: [10, 4, 3],
            src_row_pitch: 16,
            src_slice_pitch: 128,
            dst_row_pitch: 0,
            dst_slice_pitch: 0,
        };
        assert_eq!(span(&extent, true), 3 * 128 + 4 * 16 + 2 + 10);
        // Unset pitches mean tightly packed rows and slices.
        assert_eq!(span(&extent, false), 2 * 40 + 3 * 10 + 10);
    }
}
