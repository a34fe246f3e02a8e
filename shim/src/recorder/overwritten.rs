//! Data the program cannot have seen: a copy into host memory that a later copy of the same
//! window overwrote before the program synchronized (simpleStreams copies 100 rounds into one
//! buffer, then waits once). Its bytes are gone when the window closes, so only the last
//! writer's are kept; the replay still runs the earlier copies, comparing nothing for them.

use super::HostRegion;
use std::collections::BTreeMap;

/// Host ranges written by the window's later copies, merged (start to end).
#[derive(Default)]
pub(super) struct LaterWrites(BTreeMap<usize, usize>);

impl LaterWrites {
    /// Whether later copies cover all of `region`; adds it to them either way.
    pub fn covers_then_add(&mut self, region: HostRegion) -> bool {
        let (start, end) = (region.address, region.address.saturating_add(region.len));
        let covered = self.0.range(..=start).next_back().is_some_and(|(_, &until)| until >= end);
        if !covered {
            self.add(start, end);
        }
        covered
    }

    fn add(&mut self, mut start: usize, mut end: usize) {
        if let Some((&before, &until)) = self.0.range(..=start).next_back() {
            if until >= start {
                start = before;
                end = end.max(until);
            }
        }
        let absorbed: Vec<usize> = self.0.range(start..=end).map(|(&at, _)| at).collect();
        for at in absorbed {
            end = end.max(self.0.remove(&at).unwrap_or(at));
        }
        self.0.insert(start, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(address: usize, len: usize) -> HostRegion {
        HostRegion { address, len }
    }

    #[test]
    fn a_region_is_covered_only_by_what_later_writes_cover_together() {
        let mut later = LaterWrites::default();
        // Visited last to first: the window's last two copies wrote 0..16 and 16..32.
        assert!(!later.covers_then_add(region(16, 16)));
        assert!(!later.covers_then_add(region(0, 16)));
        assert!(later.covers_then_add(region(4, 28)), "covered by the two together");
        assert!(!later.covers_then_add(region(24, 16)), "32..40 was not written later");
        assert!(later.covers_then_add(region(0, 40)));
        assert!(!later.covers_then_add(region(100, 1)));
        assert!(!later.covers_then_add(region(41, 59)), "one byte at 40 is missing");
    }
}
