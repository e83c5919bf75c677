//! Criterion benches of triskel live in `benches/`; this library holds what
//! the interleaved A/B benches (`peers_ab`, `backends_ab`) share.

use std::time::Instant;

/// Rounds of an interleaved A/B comparison, and calls timed per round and side.
pub const AB_ROUNDS: usize = 201;
pub const AB_CALLS: usize = 5;

/// What an interleaved A/B comparison measured: per side, the fastest and
/// the median round (ns per call), and the median of the per-round ratios.
pub struct AbTimes {
    pub a_min: f64,
    pub b_min: f64,
    pub a_median: f64,
    pub b_median: f64,
    pub median_ratio: f64,
}

impl AbTimes {
    /// a / b from the fastest rounds: on a loaded machine preemption only
    /// ever adds time, so the fastest of many short rounds is the cleanest.
    pub fn min_ratio(&self) -> f64 {
        self.a_min / self.b_min
    }

    /// The table cells "a fastest / median | b fastest / median | fastest /
    /// median ratio | load" in ms with `decimals` digits, for the A/B binaries.
    pub fn ms_cells(&self, decimals: usize) -> String {
        let ms = |ns: f64| ns / 1e6;
        format!(
            "{:.d$} / {:.d$} | {:.d$} / {:.d$} | {:.2} / {:.2} | {}",
            ms(self.a_min),
            ms(self.a_median),
            ms(self.b_min),
            ms(self.b_median),
            self.min_ratio(),
            self.median_ratio,
            load_average(),
            d = decimals
        )
    }
}

/// Times `a` and `b` over AB_ROUNDS short rounds of AB_CALLS calls that
/// alternate which side runs first, after one warm-up round each, so that a
/// loaded, shared machine slows both sides alike.
pub fn interleaved(a: impl FnMut(), b: impl FnMut()) -> AbTimes {
    interleaved_on(AB_ROUNDS, AB_CALLS, wall_ns, a, b)
}

/// Nanoseconds since the first call (wall time).
pub fn wall_ns() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// CPU time of every thread of the process in nanoseconds
/// (`CLOCK_PROCESS_CPUTIME_ID`): work on a one-thread rayon pool runs on the
/// pool's thread, not the caller's. (The per-task `schedstat` counters read
/// before advance only at scheduler ticks: 4 ms steps on a busy thread.)
pub fn process_cpu_ns() -> u64 {
    cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer and
    // keeps nothing.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime({clock}) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// [`interleaved`] with `rounds` rounds of `calls` calls timed by `clock`.
pub fn interleaved_on(
    rounds: usize,
    calls: usize,
    clock: fn() -> u64,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> AbTimes {
    let time = |f: &mut dyn FnMut()| {
        let start = clock();
        for _ in 0..calls {
            f();
        }
        clock().saturating_sub(start) as f64 / calls as f64
    };
    time(&mut a);
    time(&mut b);
    let (mut ta, mut tb, mut ratios) = (vec![], vec![], vec![]);
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            let x = time(&mut a);
            (x, time(&mut b))
        } else {
            let y = time(&mut b);
            (time(&mut a), y)
        };
        ta.push(x);
        tb.push(y);
        ratios.push(x / y);
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    AbTimes {
        a_min: min(&ta),
        b_min: min(&tb),
        a_median: median(ta),
        b_median: median(tb),
        median_ratio: median(ratios),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The 1, 5 and 15 minute load averages (Linux), or "unknown".
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

/// n pseudo-random residues below q.
pub fn residues(n: usize, q: u64, seed: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| (i.wrapping_add(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3) % q)
        .collect()
}
