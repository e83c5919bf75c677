//! CPU-time measurements for criterion: on a shared, loaded machine wall
//! time mostly measures the other processes. Included by the benches that
//! need them (`#[path = "common/cpu_time.rs"] mod cpu_time;`).
#![allow(dead_code)]

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;
use triskel_benches::{process_cpu_ns, thread_cpu_ns};

/// A criterion measurement in nanoseconds of the clock `$now`.
macro_rules! cpu_time_measurement {
    ($name:ident, $now:ident) => {
        impl Measurement for $name {
            type Intermediate = u64;
            type Value = u64;
            fn start(&self) -> u64 {
                $now()
            }
            fn end(&self, start: u64) -> u64 {
                // A thread that exited in between takes its time with it.
                $now().saturating_sub(start)
            }
            fn add(&self, a: &u64, b: &u64) -> u64 {
                a + b
            }
            fn zero(&self) -> u64 {
                0
            }
            fn to_f64(&self, v: &u64) -> f64 {
                *v as f64
            }
            fn formatter(&self) -> &dyn ValueFormatter {
                &Nanoseconds
            }
        }
    };
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`). Still inflated by a busy sibling
/// hyper-thread and shared caches, but not by waiting for a CPU.
pub struct ThreadCpuTime;

/// Formats nanoseconds like criterion's wall time.
struct Nanoseconds;

impl ValueFormatter for Nanoseconds {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e-3, "us"),
            t if t < 1e9 => (1e-6, "ms"),
            _ => (1e-9, "s"),
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    fn scale_throughputs(&self, _: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let per = match t {
            Throughput::Elements(e) | Throughput::Bytes(e) | Throughput::BytesDecimal(e) => {
                *e as f64
            }
            _ => 1.0,
        };
        values.iter_mut().for_each(|v| *v = per * 1e9 / *v);
        "elem/s (CPU time)"
    }

    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}

cpu_time_measurement!(ThreadCpuTime, thread_cpu_ns);

/// CPU time of every thread of the process (`CLOCK_PROCESS_CPUTIME_ID`): a benchmark on a one-thread rayon pool runs
/// on the pool's thread, not the caller's.
pub struct ProcessCpuTime;

cpu_time_measurement!(ProcessCpuTime, process_cpu_ns);
