//! What `replay --compare` checks and how. Compared are the expected memory states of the trace
//! and the data the program received on the host (reads, maps), each after the segment that
//! produced it, in every run (after the first, only what differed in it). Bytes that differ
//! between runs are unstable (atomics whose winner varies, timers, races), by aligned word:
//! they are counted, never failed. A
//! mismatch is a difference from the recording in stable bytes. Floating-point contents can be
//! compared within a tolerance, element by element.

use super::addresses::address_words;
use super::printed::{Lines, PrintedRuns};
use crate::memory_diff::{hex, ByteDifference};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use trace_format::{MemId, NodeId};

/// A floating-point element type, for comparisons within a tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Element {
    F16,
    F32,
    F64,
}

impl Element {
    fn size(self) -> usize {
        match self {
            Element::F16 => 2,
            Element::F32 => 4,
            Element::F64 => 8,
        }
    }

    /// The element at the start of `bytes` as a double, and its units-in-the-last-place index
    /// (an ordered integer: adjacent floats differ by one).
    fn decode(self, bytes: &[u8]) -> (f64, i64) {
        match self {
            Element::F16 => {
                let bits = u16::from_ne_bytes([bytes[0], bytes[1]]);
                (half_to_f64(bits), ordered(u64::from(bits), 16))
            }
            Element::F32 => {
                let bits = u32::from_ne_bytes(bytes[..4].try_into().expect("4 bytes"));
                (f64::from(f32::from_bits(bits)), ordered(u64::from(bits), 32))
            }
            Element::F64 => {
                let bits = u64::from_ne_bytes(bytes[..8].try_into().expect("8 bytes"));
                (f64::from_bits(bits), ordered(bits, 64))
            }
        }
    }
}

/// Sign-magnitude float bits of `width` as an integer ordered like the floats.
fn ordered(bits: u64, width: u32) -> i64 {
    let sign = 1u64 << (width - 1);
    let magnitude = (bits & (sign - 1)) as i64;
    if bits & sign != 0 { -magnitude } else { magnitude }
}

fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let fraction = f64::from(bits & 0x3ff);
    sign * match exponent {
        0 => fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + fraction / 1024.0) * 2f64.powi(exponent - 15),
    }
}

/// How far floating-point elements may be apart and still count as equal: within `absolute`,
/// or `relative` of the expected value, or `ulps` units in the last place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Tolerance {
    pub absolute: f64,
    pub relative: f64,
    pub ulps: u64,
}

impl Tolerance {
    /// `abs=1e-6,rel=1e-5,ulps=4`, any of them.
    pub fn parse(text: &str) -> Result<Tolerance, String> {
        let mut tolerance = Tolerance::default();
        for part in text.split(',').map(str::trim).filter(|part| !part.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| format!("`{part}` is not KEY=VALUE (abs, rel, ulps)"))?;
            let number = |value: &str| value.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
            match key.trim() {
                "abs" => tolerance.absolute = number(value).ok_or_else(|| format!("abs={value} is not a non-negative number"))?,
                "rel" => tolerance.relative = number(value).ok_or_else(|| format!("rel={value} is not a non-negative number"))?,
                "ulps" => tolerance.ulps = value.parse().map_err(|_| format!("ulps={value} is not a whole number"))?,
                other => return Err(format!("unknown tolerance `{other}` (abs, rel, ulps)")),
            }
        }
        Ok(tolerance)
    }

    fn accepts(&self, element: Element, expected: &[u8], actual: &[u8]) -> bool {
        let ((want, want_ulp), (got, got_ulp)) = (element.decode(expected), element.decode(actual));
        if want.is_nan() || got.is_nan() {
            return want.is_nan() && got.is_nan();
        }
        let difference = (want - got).abs();
        difference <= self.absolute || difference <= self.relative * want.abs() || want_ulp.abs_diff(got_ulp) <= self.ulps
    }
}

/// How contents are compared: byte for byte, or as floats within a tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    Exact,
    Within(Element, Tolerance),
}

/// Byte ranges where `actual` differs from `expected` under `rule` (bytes only one side has
/// differ).
pub fn differences(expected: &[u8], actual: &[u8], rule: Rule) -> Vec<Range<usize>> {
    let common = expected.len().min(actual.len());
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut push = |range: Range<usize>| push_merged(&mut ranges, range);
    if expected[..common] != actual[..common] {
        let step = match rule {
            Rule::Exact => 1,
            Rule::Within(element, _) => element.size(),
        };
        let mut at = 0;
        while at < common {
            let end = (at + step).min(common);
            let (want, got) = (&expected[at..end], &actual[at..end]);
            let equal = match rule {
                Rule::Within(element, tolerance) if end - at == step => tolerance.accepts(element, want, got),
                _ => want == got,
            };
            if !equal {
                push(at..end);
            }
            at = end;
        }
    }
    if expected.len() != actual.len() {
        push(common..expected.len().max(actual.len()));
    }
    ranges
}

/// Adds `next` (starting at or after the last range's start) to sorted, disjoint `ranges`,
/// merged with the last where they touch or overlap.
fn push_merged(ranges: &mut Vec<Range<usize>>, next: Range<usize>) {
    match ranges.last_mut() {
        Some(last) if last.end >= next.start => last.end = last.end.max(next.end),
        _ => ranges.push(next),
    }
}

fn total(ranges: &[Range<usize>]) -> u64 {
    ranges.iter().map(|range| range.len() as u64).sum()
}

/// `ranges` without what `unstable` covers (both sorted, disjoint), in one pass over both.
fn without(ranges: &[Range<usize>], unstable: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut kept = Vec::new();
    let mut cuts = unstable.iter().peekable();
    for range in ranges {
        let mut start = range.start;
        while let Some(cut) = cuts.peek() {
            if cut.start >= range.end {
                break;
            }
            if cut.start > start {
                kept.push(start..cut.start);
            }
            start = start.max(cut.end);
            if cut.end > range.end {
                break; // it reaches into the next ranges too
            }
            cuts.next();
        }
        if start < range.end {
            kept.push(start..range.end);
        }
    }
    kept
}

/// A value varies as a whole: `ranges` (sorted, disjoint) grown to the aligned `word`s holding
/// them, within `len`. A timer's high bytes agree between two replays moments apart yet
/// differ from the recording; they belong to the same unstable value as its low bytes.
fn whole_words(ranges: &[Range<usize>], word: usize, len: usize) -> Vec<Range<usize>> {
    let mut grown: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        push_merged(&mut grown, range.start / word * word..range.end.div_ceil(word).saturating_mul(word).min(len.max(range.end)));
    }
    grown
}

/// What was compared: a memory object's contents, the data a copy delivered to the host, or
/// what kernels printed (its lines in sorted order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subject {
    Memory(MemId),
    Received(NodeId),
    Printed,
}

#[derive(Debug, Serialize)]
pub struct Mismatch {
    pub segment: u32,
    /// The memory object compared, for memory states.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem: Option<u32>,
    /// The copy whose host data was compared, for data the program received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// What the segment's kernels printed was compared (its stable lines, sorted).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub printed: bool,
    /// Stable bytes that differ from the recording.
    #[serde(flatten)]
    pub difference: ByteDifference,
    /// The aligned 8-byte word holding the first stable difference, as the recording and the replay
    /// have it (hexadecimal, in memory order): where to start looking.
    pub expected_word: String,
    pub actual_word: String,
}

impl Mismatch {
    /// `stable` (sorted, not empty) are the bytes where `actual` differs from `expected`.
    fn of(segment: u32, subject: Subject, stable: &[Range<usize>], expected: &[u8], actual: &[u8]) -> Mismatch {
        let start = stable[0].start / UNSTABLE_WORD * UNSTABLE_WORD;
        let difference = ByteDifference {
            first_offset: stable[0].start as u64,
            differing_bytes: total(stable),
            expected_len: expected.len() as u64,
            actual_len: actual.len() as u64,
        };
        let (mem, node) = match subject {
            Subject::Memory(mem) => (Some(mem.0), None),
            Subject::Received(node) => (None, Some(node.0)),
            Subject::Printed => (None, None),
        };
        let word = |bytes: &[u8]| bytes.get(start..(start + UNSTABLE_WORD).min(bytes.len())).map(hex).unwrap_or_default();
        Mismatch { segment, mem, node, printed: subject == Subject::Printed, difference, expected_word: word(expected), actual_word: word(actual) }
    }

    pub fn subject(&self) -> String {
        match (self.mem, self.node, self.printed) {
            (Some(mem), _, _) => format!("memory {mem}"),
            (_, Some(node), _) => format!("data received by node {node}"),
            (_, _, true) => "what the device printed (stable lines, sorted)".to_string(),
            _ => "contents".to_string(),
        }
    }
}

#[derive(Debug, Default)]
pub struct Comparison {
    /// Memory states and received data compared.
    pub compared: usize,
    /// Bytes that differed between two replays of the same segment: not failed.
    pub unstable_bytes: u64,
    /// Bytes of words that held an address in the recording and hold one in the replay
    /// (`addresses`): they differ by where memory lies; not failed.
    pub address_bytes: u64,
    /// Bytes of spans that hold the recorded 4-byte values in another order (`reordered`): where
    /// unordered writers hand out slots (atomics), the order is the race's outcome; not failed.
    pub reordered_bytes: u64,
    /// Compared within a tolerance rather than byte for byte.
    pub within_tolerance: usize,
    pub mismatches: Vec<Mismatch>,
    /// Unordered nodes that use the same memory, one writing it (`crate::hazards`): where a
    /// result differs, the first place to look. The first `HAZARDS_KEPT` in words, all counted.
    pub hazards: Vec<String>,
    pub hazard_count: usize,
    /// Segments whose synchronization failed in the recording (a device fault) but not in the
    /// replay, in words.
    pub outcomes_differ: Vec<String>,
    /// Why the trace does not hold all of the program's work (its partial reasons, in words):
    /// equal results then say nothing of what it left out, so the comparison does not pass.
    pub incomplete: Vec<String>,
}

/// How many hazards a comparison keeps in words.
pub const HAZARDS_KEPT: usize = 100;

impl Comparison {
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty() && self.outcomes_differ.is_empty() && self.incomplete.is_empty()
    }

    pub fn hazard(&mut self, hazard: &impl std::fmt::Display) {
        if self.hazards.len() < HAZARDS_KEPT {
            self.hazards.push(hazard.to_string());
        }
        self.hazard_count += 1;
    }
}

impl Serialize for Comparison {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut fields = serializer.serialize_struct("Comparison", 11)?;
        fields.serialize_field("passed", &self.passed())?;
        fields.serialize_field("compared", &self.compared)?;
        fields.serialize_field("unstable_bytes", &self.unstable_bytes)?;
        fields.serialize_field("address_bytes", &self.address_bytes)?;
        fields.serialize_field("reordered_bytes", &self.reordered_bytes)?;
        fields.serialize_field("within_tolerance", &self.within_tolerance)?;
        fields.serialize_field("mismatches", &self.mismatches)?;
        fields.serialize_field("hazard_count", &self.hazard_count)?;
        fields.serialize_field("hazards", &self.hazards)?;
        fields.serialize_field("outcomes_differ", &self.outcomes_differ)?;
        fields.serialize_field("incomplete", &self.incomplete)?;
        fields.end()
    }
}

/// Bytes compared exactly are unstable by aligned words of this size: the widest scalar a
/// kernel writes at once (a 64-bit timer or atomic).
const UNSTABLE_WORD: usize = 8;

/// Which run of a segment a comparison belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    First,
    /// A run between the first and the last: it only widens what is unstable.
    Middle,
    Last,
}

/// What the first run left where it differed from the recording, and the bytes later runs
/// found unstable so far.
struct Differed {
    first: Vec<u8>,
    unstable: Vec<Range<usize>>,
}

/// Compares across runs: it keeps, from the first, only the contents that differed from the
/// recording (the others equal it, so any later difference is unstable); every later run of
/// those adds the bytes where it differs from the first to the unstable ones.
#[derive(Default)]
pub struct Checker {
    differed: HashMap<(u32, Subject), Differed>,
    /// Memory that unordered nodes of a segment both write (a hazard), data copies of the segment
    /// read from it, and data the recording says was read while unordered commands of later
    /// segments wrote it (`Segment::racy_reads`): a race's outcome, which the graph leaves open,
    /// so unstable; by the byte ranges that race (all of them, or the pages the host wrote while
    /// the device wrote the same memory).
    racy: HashMap<(u32, Subject), Vec<Range<usize>>>,
    /// What the first run of each segment printed where it differed from the recording.
    printed: HashMap<u32, PrintedRuns>,
    /// The segments the first run differed in (memory, received data or what they printed).
    watched: HashSet<u32>,
    pub comparison: Comparison,
}

impl Checker {
    /// `subject` of `segment` holds a race's outcome (see `racy`).
    pub fn note_racy(&mut self, segment: u32, subject: Subject) {
        self.note_racy_bytes(segment, subject, 0..usize::MAX);
    }

    /// Bytes `range` of `subject` of `segment` hold a race's outcome.
    pub fn note_racy_bytes(&mut self, segment: u32, subject: Subject, range: Range<usize>) {
        let ranges = self.racy.entry((segment, subject)).or_default();
        *ranges = union(ranges, &[range]);
    }

    /// Whether any of `subject` of `segment` holds a race's outcome.
    pub fn is_racy(&self, segment: u32, subject: Subject) -> bool {
        self.racy.contains_key(&(segment, subject))
    }

    /// Whether a middle run of `subject` in `segment` can tell anything (the first run differed).
    pub fn watches(&self, segment: u32, subject: Subject) -> bool {
        self.differed.contains_key(&(segment, subject))
    }

    /// Whether a middle run of `segment` can tell anything about any of its subjects.
    pub fn watches_segment(&self, segment: u32) -> bool {
        self.watched.contains(&segment)
    }

    pub fn check(&mut self, run: Run, segment: u32, subject: Subject, expected: &[u8], actual: Vec<u8>, rule: Rule) {
        if subject == Subject::Printed {
            return self.check_printed(run, segment, expected, &actual);
        }
        let word = match rule {
            Rule::Exact => UNSTABLE_WORD,
            Rule::Within(element, _) => element.size(),
        };
        let len = actual.len().max(expected.len());
        match run {
            Run::First => {
                if !differences(expected, &actual, rule).is_empty() {
                    self.watched.insert(segment);
                    self.differed.insert((segment, subject), Differed { first: actual, unstable: Vec::new() });
                }
            }
            Run::Middle => {
                if let Some(differed) = self.differed.get_mut(&(segment, subject)) {
                    let now = whole_words(&differences(&differed.first, &actual, rule), word, len);
                    differed.unstable = union(&differed.unstable, &now);
                }
            }
            Run::Last => {
                let differing = differences(expected, &actual, rule);
                let racing = self.racy.get(&(segment, subject)).map(|racy| without(&differing, &without(&differing, racy))).unwrap_or_default();
                let between_runs = match self.differed.remove(&(segment, subject)) {
                    Some(differed) => union(&differed.unstable, &whole_words(&differences(&differed.first, &actual, rule), word, len)),
                    // The first run equalled the recording: whatever differs now differs between runs.
                    None => whole_words(&differing, word, len),
                };
                let unstable = union(&between_runs, &whole_words(&racing, word, len));
                self.comparison.compared += 1;
                self.comparison.within_tolerance += usize::from(rule != Rule::Exact);
                self.comparison.unstable_bytes += total(&unstable);
                let mut stable = without(&differing, &unstable);
                if !stable.is_empty() && rule == Rule::Exact {
                    let addresses = address_words(expected, &actual, &stable);
                    self.comparison.address_bytes += total(&addresses);
                    stable = without(&stable, &addresses);
                    // Over all that differs: the values unstable between runs moved too.
                    if let Some(span) = reordered(expected, &actual, &differing) {
                        self.comparison.reordered_bytes += span.len() as u64;
                        stable.clear();
                    }
                }
                if !stable.is_empty() {
                    self.comparison.mismatches.push(Mismatch::of(segment, subject, &stable, expected, &actual));
                }
            }
        }
    }

    /// Printed output is judged by its lines (`PrintedRuns`): those whose count varied between
    /// runs are unstable, the others must be printed as often as recorded.
    fn check_printed(&mut self, run: Run, segment: u32, recorded: &[u8], printed: &[u8]) {
        let now = Lines::of(printed);
        match run {
            // As with memory, only a first run that differed from the recording is kept.
            Run::First => {
                if now != Lines::of(recorded) {
                    self.watched.insert(segment);
                    self.printed.insert(segment, PrintedRuns::new(now));
                }
            }
            Run::Middle => {
                if let Some(runs) = self.printed.get_mut(&segment) {
                    runs.later(&now);
                }
            }
            Run::Last => {
                let mut runs = self.printed.remove(&segment).unwrap_or_else(|| PrintedRuns::new(Lines::of(recorded)));
                runs.later(&now);
                let (expected, actual, unstable_bytes) = runs.stable_texts(&Lines::of(recorded), &now);
                self.comparison.compared += 1;
                self.comparison.unstable_bytes += unstable_bytes;
                let stable = differences(&expected, &actual, Rule::Exact);
                if !stable.is_empty() {
                    self.comparison.mismatches.push(Mismatch::of(segment, Subject::Printed, &stable, &expected, &actual));
                }
            }
        }
    }
}

/// Values are reordered by this width: the 32-bit words compaction kernels write, each at the slot
/// an atomic handed out.
const REORDERED_WORD: usize = 4;

/// The span from the first to the last of `differing` (aligned to whole words, two at least)
/// where `actual` holds the same words as `expected`, in another order.
fn reordered(expected: &[u8], actual: &[u8], differing: &[Range<usize>]) -> Option<Range<usize>> {
    let (first, last) = (differing.first()?, differing.last()?);
    let span = first.start / REORDERED_WORD * REORDERED_WORD..last.end.div_ceil(REORDERED_WORD) * REORDERED_WORD;
    if expected.len() != actual.len() || span.end > expected.len() || span.len() < 2 * REORDERED_WORD {
        return None;
    }
    let sorted = |bytes: &[u8]| {
        let mut words: Vec<&[u8]> = bytes[span.clone()].chunks_exact(REORDERED_WORD).collect();
        words.sort_unstable();
        words.concat()
    };
    (sorted(expected) == sorted(actual)).then_some(span)
}

/// The bytes either of two sorted, disjoint range lists covers, sorted and disjoint.
fn union(a: &[Range<usize>], b: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut all: Vec<Range<usize>> = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    while let Some(next) = match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if y.start < x.start => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    } {
        push_merged(&mut all, next.clone());
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMORY: Subject = Subject::Memory(MemId(0));

    #[test]
    fn differences_are_byte_ranges_and_lengths_count() {
        assert_eq!(differences(b"abcdef", b"abXdYf", Rule::Exact), [2..3, 4..5]);
        assert_eq!(differences(b"abc", b"abcde", Rule::Exact), [3..5]);
        assert!(differences(b"same", b"same", Rule::Exact).is_empty());
    }

    #[test]
    fn floats_within_a_tolerance_are_equal() {
        let floats = |values: &[f32]| values.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>();
        let (expected, actual) = (floats(&[1.0, 100.0, 3.0]), floats(&[1.0 + 1e-7, 100.01, 3.5]));
        let relative = Rule::Within(Element::F32, Tolerance { relative: 1e-3, ..Tolerance::default() });
        assert_eq!(differences(&expected, &actual, relative), [8..12]);
        let ulps = Rule::Within(Element::F32, Tolerance { ulps: 2, ..Tolerance::default() });
        assert_eq!(differences(&expected, &actual, ulps), [4..12]);
        let doubles: Vec<u8> = [0.5f64].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let near: Vec<u8> = [0.5f64 + 1e-12].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert!(differences(&doubles, &near, Rule::Within(Element::F64, Tolerance { absolute: 1e-9, ..Tolerance::default() })).is_empty());
        // 0x3c00 is 1.0 in half precision, 0x3c01 the next float.
        assert!(differences(&0x3c00u16.to_ne_bytes(), &0x3c01u16.to_ne_bytes(), Rule::Within(Element::F16, Tolerance { ulps: 1, ..Tolerance::default() })).is_empty());
    }

    #[test]
    fn tolerances_parse() {
        assert_eq!(Tolerance::parse("abs=1e-6, ulps=4"), Ok(Tolerance { absolute: 1e-6, relative: 0.0, ulps: 4 }));
        assert!(Tolerance::parse("abs=-1").is_err());
        assert!(Tolerance::parse("near=1").is_err());
        assert!(Tolerance::parse("rel").is_err());
    }

    #[test]
    fn the_recorded_values_in_another_order_are_reordered_not_failed() {
        let words = |values: &[u32]| values.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>();
        // Slots handed out by an atomic: the same values, another order, in both replays.
        let mut checker = Checker::default();
        for run in [Run::First, Run::Last] {
            checker.check(run, 0, MEMORY, &words(&[9, 1, 2, 3, 4, 9]), words(&[9, 3, 1, 4, 2, 9]), Rule::Exact);
        }
        assert!(checker.comparison.passed(), "{:?}", checker.comparison);
        assert_eq!(checker.comparison.reordered_bytes, 16);
        // Replays that order them differently each time: the bytes unstable between runs are part
        // of the span whose values are compared.
        let mut checker = Checker::default();
        let expected = words(&[1, 2, 3, 4, 5, 6, 7, 8]);
        checker.check(Run::First, 0, MEMORY, &expected, words(&[8, 2, 3, 4, 5, 6, 1, 7]), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, &expected, words(&[8, 2, 3, 4, 5, 6, 7, 1]), Rule::Exact);
        assert!(checker.comparison.passed(), "{:?}", checker.comparison);
        // One value changed is a mismatch, reordered or not.
        let mut checker = Checker::default();
        for run in [Run::First, Run::Last] {
            checker.check(run, 0, MEMORY, &words(&[9, 1, 2, 3, 4, 9]), words(&[9, 3, 1, 4, 5, 9]), Rule::Exact);
        }
        assert!(!checker.comparison.passed());
    }

    #[test]
    fn a_mismatch_shows_the_word_of_its_first_difference_on_both_sides() {
        let mut checker = Checker::default();
        for run in [Run::First, Run::Last] {
            checker.check(run, 0, MEMORY, b"same as before: 12345678", b"same as before: 12X45678".to_vec(), Rule::Exact);
        }
        let mismatch = &checker.comparison.mismatches[0];
        assert_eq!((mismatch.difference.first_offset, mismatch.expected_word.as_str(), mismatch.actual_word.as_str()), (18, "3132333435363738", "3132583435363738"));
    }

    #[test]
    fn bytes_that_differ_between_runs_are_unstable_not_failed() {
        let mut checker = Checker::default();
        checker.check(Run::First, 0, MEMORY, b"winner:1 total:9", b"winner:2 total:9".to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, b"winner:1 total:9", b"winner:3 total:9".to_vec(), Rule::Exact);
        assert!(checker.comparison.passed());
        // The winner's byte makes its whole 8-byte word unstable.
        assert_eq!((checker.comparison.compared, checker.comparison.unstable_bytes), (1, 8));
    }

    #[test]
    fn memory_unordered_nodes_both_write_is_unstable_where_it_differs() {
        // All runs agree on an outcome of the race the recording did not have.
        let mut checker = Checker::default();
        checker.note_racy(0, MEMORY);
        checker.check(Run::First, 0, MEMORY, b"first wrote last", b"other wrote last".to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, b"first wrote last", b"other wrote last".to_vec(), Rule::Exact);
        assert!(checker.comparison.passed(), "{:?}", checker.comparison);
        assert_eq!(checker.comparison.unstable_bytes, 8);
        // The same in memory no race writes fails.
        let other = Subject::Memory(MemId(1));
        checker.check(Run::First, 0, other, b"first wrote last", b"other wrote last".to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, other, b"first wrote last", b"other wrote last".to_vec(), Rule::Exact);
        assert!(!checker.comparison.passed());
    }

    #[test]
    fn only_the_bytes_the_host_wrote_while_the_device_did_are_a_race_s() {
        let mut checker = Checker::default();
        checker.note_racy_bytes(0, MEMORY, 0..4);
        checker.check(Run::First, 0, MEMORY, b"host then kernel", b"kern then kernel".to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, b"host then kernel", b"kern then kernel".to_vec(), Rule::Exact);
        assert!(checker.comparison.passed(), "{:?}", checker.comparison);
        checker.check(Run::First, 1, MEMORY, b"host then kernel", b"kern then Kernel".to_vec(), Rule::Exact);
        checker.check(Run::Last, 1, MEMORY, b"host then kernel", b"kern then Kernel".to_vec(), Rule::Exact);
        assert!(!checker.comparison.passed(), "segment 1 has no race: both differences count");
        let mut checker = Checker::default();
        checker.note_racy_bytes(0, MEMORY, 0..4);
        checker.check(Run::First, 0, MEMORY, b"host then kernel", b"kern then Kernel".to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, b"host then kernel", b"kern then Kernel".to_vec(), Rule::Exact);
        assert_eq!(checker.comparison.mismatches.len(), 1, "a difference past the host's bytes still fails");
    }

    #[test]
    fn a_timer_is_unstable_as_a_whole_word() {
        // Two replays moments apart agree on a timer's high bytes; the recording does not.
        let recorded = 0x0000_0123_4500_0000u64.to_ne_bytes();
        let (first, last) = (0x0000_0456_7811_1111u64.to_ne_bytes(), 0x0000_0456_7822_2222u64.to_ne_bytes());
        let mut checker = Checker::default();
        checker.check(Run::First, 0, MEMORY, &recorded, first.to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, &recorded, last.to_vec(), Rule::Exact);
        assert!(checker.comparison.passed(), "{:?}", checker.comparison);
        assert_eq!(checker.comparison.unstable_bytes, 8);
    }

    #[test]
    fn stable_ranges_leave_out_unstable_ones_in_one_pass() {
        assert_eq!(without(&[0..10, 20..30], &[5..25]), [0..5, 25..30]);
        assert_eq!(without(&[0..4, 8..12, 16..20], &[1..2, 9..10, 30..40]), [0..1, 2..4, 8..9, 10..12, 16..20]);
        assert_eq!(whole_words(&[1..2, 3..4, 17..18], 8, 20), [0..8, 16..20]);
        assert_eq!(union(&[0..2, 10..12], &[1..5, 12..14, 20..21]), [0..5, 10..14, 20..21]);
        // A million scattered differences take linear time.
        let scattered: Vec<Range<usize>> = (0..1_000_000).map(|i| i * 16..i * 16 + 1).collect();
        assert_eq!(without(&scattered, &scattered).len(), 0);
    }

    #[test]
    fn every_run_between_the_first_and_the_last_adds_unstable_bytes() {
        // The first and the last run agree on bytes 8-15, a middle run does not.
        let recorded = b"aaaaaaaabbbbbbbbcccccccc";
        let mut checker = Checker::default();
        checker.check(Run::First, 0, MEMORY, recorded, b"XaaaaaaaYbbbbbbbcccccccc".to_vec(), Rule::Exact);
        assert!(checker.watches(0, MEMORY));
        checker.check(Run::Middle, 0, MEMORY, recorded, b"ZaaaaaaaZbbbbbbbcccccccc".to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, recorded, b"XaaaaaaaYbbbbbbbcccccccc".to_vec(), Rule::Exact);
        assert!(checker.comparison.passed(), "{:?}", checker.comparison);
        assert_eq!(checker.comparison.unstable_bytes, 16);
    }

    #[test]
    fn a_difference_both_runs_make_alike_fails() {
        let mut checker = Checker::default();
        let node = Subject::Received(NodeId(7));
        checker.check(Run::First, 3, node, b"total:9 t:1", b"total:8 t:5".to_vec(), Rule::Exact);
        checker.check(Run::Last, 3, node, b"total:9 t:1", b"total:8 t:6".to_vec(), Rule::Exact);
        let comparison = &checker.comparison;
        // The unstable byte's word (bytes 8-10) is unstable; "total:8" lies in the word before.
        assert_eq!(comparison.unstable_bytes, 3);
        let [mismatch] = &comparison.mismatches[..] else { panic!("one mismatch: {comparison:?}") };
        assert_eq!((mismatch.segment, mismatch.node, mismatch.mem), (3, Some(7), None));
        assert_eq!((mismatch.difference.first_offset, mismatch.difference.differing_bytes), (6, 1));
    }

    #[test]
    fn a_first_run_that_matched_makes_every_later_difference_unstable() {
        let mut checker = Checker::default();
        checker.check(Run::First, 0, MEMORY, b"abcd", b"abcd".to_vec(), Rule::Exact);
        checker.check(Run::Last, 0, MEMORY, b"abcd", b"abXY".to_vec(), Rule::Exact);
        assert!(checker.comparison.passed());
        assert_eq!(checker.comparison.unstable_bytes, 4);
    }

    #[test]
    fn printed_lines_count_in_any_order_and_lines_runs_disagree_on_are_unstable() {
        let printed = |first: &[u8], last: &[u8], recorded: &[u8]| {
            let mut checker = Checker::default();
            checker.check(Run::First, 0, Subject::Printed, recorded, first.to_vec(), Rule::Exact);
            checker.check(Run::Last, 0, Subject::Printed, recorded, last.to_vec(), Rule::Exact);
            checker.comparison
        };
        let reordered = printed(b"b\na\n", b"a\nb\n", b"a\nb\n");
        assert!(reordered.passed() && reordered.unstable_bytes == 0);
        // A line one run printed late (or not at all) is unstable: 2 bytes.
        let late = printed(b"a\nb\n", b"b\n", b"b\na\n");
        assert!(late.passed() && late.unstable_bytes == 2, "the first run matched: {late:?}");
        let late = printed(b"b\n", b"a\nb\n", b"b\na\n");
        assert!(late.passed() && late.unstable_bytes == 2, "{late:?}");
        // A recorded line no run prints fails, whatever else varies.
        let missing = printed(b"x\nb\n", b"b\n", b"a\nb\n");
        let [mismatch] = &missing.mismatches[..] else { panic!("one mismatch: {missing:?}") };
        assert!(mismatch.printed && mismatch.expected_word.starts_with("610a"), "{mismatch:?}");
    }
}
