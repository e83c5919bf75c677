//! Wall-clock medians: the statistic of the cost table ([`crate::calibrate`]),
//! `triskel bench` and `triskel demo`.

use std::time::{Duration, Instant};

/// Median of the per-call time of `f`, in nanoseconds.
///
/// Calls `f` once to warm up, then takes `samples` samples, each timing a
/// batch of calls sized so that one sample lasts about `sample_time`; the
/// median of the per-call means resists scheduler noise.
pub fn median_ns(samples: usize, sample_time: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    f();
    let one = start.elapsed().max(Duration::from_nanos(1));
    let batch = (sample_time.as_nanos() / one.as_nanos()).clamp(1, 1 << 20) as u32;
    let mut per_call: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                f();
            }
            start.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    median(&mut per_call)
}

/// Median of a list (mean of the middle two for even lengths; NaN for an
/// empty one).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.is_empty() {
        f64::NAN
    } else if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_lists() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn median_ns_runs_the_closure_and_is_positive() {
        let mut calls = 0u64;
        let ns = median_ns(3, Duration::from_micros(50), || calls += 1);
        assert!(ns > 0.0);
        assert!(calls >= 5, "warm-up, calibration and three samples");
    }
}
