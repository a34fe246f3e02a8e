//! Summary of per-iteration times.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TimeStats {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// Minimum, median and maximum of `samples`; `None` when there are none.
pub fn summarize(samples: &[f64]) -> Option<TimeStats> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    let middle = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 { sorted[middle] } else { (sorted[middle - 1] + sorted[middle]) / 2.0 };
    Some(TimeStats { min, median, max })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(summarize(&[4.0, 1.0, 3.0, 2.0]), Some(TimeStats { min: 1.0, median: 2.5, max: 4.0 }));
        assert_eq!(summarize(&[5.0, 1.0, 3.0]).map(|s| s.median), Some(3.0));
        assert_eq!(summarize(&[]), None);
    }
}
