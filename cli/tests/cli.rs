//! The `triskel` program: the bench JSON contract of docs/architecture.md and clear
//! errors for bad input.

use std::process::Command;

fn triskel(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_triskel"));
    cmd.args(args).env_remove("TRISKEL_KERNELS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run triskel");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bench_kernels_json_has_the_documented_shape() {
    let (ok, out, err) = triskel(
        &["bench", "kernels", "--n", "1024", "--bits", "40", "--json"],
        &[],
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["n"], 1024);
    assert_eq!(v["bits"], 40);
    let q = v["modulus"].as_u64().unwrap();
    assert!(
        q >> 39 == 1 && (q - 1).is_multiple_of(2048),
        "a 40-bit NTT-friendly prime"
    );
    assert!(v["cpu"].is_string() && v["features"].is_array());
    let results = v["results"].as_array().unwrap();
    for op in ["ntt_forward", "ntt_inverse", "mul", "mul_acc"] {
        let r = results
            .iter()
            .find(|r| r["backend"] == "portable" && r["op"] == op)
            .unwrap_or_else(|| panic!("portable {op} missing"));
        assert!(r["median_ns"].as_f64().unwrap() > 0.0);
        assert_eq!(r["ns_per_butterfly"].is_number(), op.starts_with("ntt"));
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 12] = [
        (&["bench", "kernels", "--n", "1000"], &[], "power of two"),
        (
            &["bench", "kernels", "--backend", "sse9"],
            &[],
            "unknown kernel backend",
        ),
        (
            &["bench", "kernels"],
            &[("TRISKEL_KERNELS", "bogus")],
            "unknown kernel backend",
        ),
        (
            &["bench", "kernels", "--bits", "70"],
            &[],
            "primes of 70 bits",
        ),
        (
            &["bench", "kernels", "--bits", "0"],
            &[],
            "NTT primes for n = 4096 have 15 to",
        ),
        (
            &[
                "bench",
                "workloads",
                "--only",
                "ckks.rotate",
                "--threads",
                "100000",
            ],
            &[],
            "--threads 100000: at most",
        ),
        (
            &["bench", "workloads", "--only", "nope"],
            &[],
            "no workload named",
        ),
        (
            &[
                "bench",
                "workloads",
                "--only",
                "ckks.rotate",
                "--threads",
                "0",
            ],
            &[],
            "--threads must be at least 1",
        ),
        (
            &[
                "bench",
                "workloads",
                "--only",
                "ckks.rotate",
                "--threads",
                "2",
            ],
            &[("TRISKEL_BENCH_CLOCK", "cpu")],
            "use --threads 1",
        ),
        (
            &["bench", "workloads", "--only", "ckks.rotate", "--spread"],
            &[],
            "give K > 1",
        ),
        (
            &["bench", "scaling", "--only", "ckks.rotate", "--rounds", "0"],
            &[],
            "--rounds must be at least 1",
        ),
        (
            &["bench", "scaling", "--only", "nope"],
            &[],
            "no workload named",
        ),
    ];
    for (args, env, message) in cases {
        let (ok, _, err) = triskel(args, env);
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn ckks_workload_json_is_verified_and_threads_report_throughput() {
    let (ok, out, err) = triskel(
        &[
            "bench",
            "workloads",
            "--only",
            "ckks.poly_x2",
            "--json",
            "--threads",
            "2",
        ],
        &[],
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["threads"], 2);
    assert_eq!(v["parallelism"], "copies");
    let w = &v["workloads"][0];
    assert_eq!(w["name"], "ckks.poly_x2");
    assert_eq!(w["engine"], "ckks");
    assert_eq!(w["verified"], true);
    let err = w["max_abs_error"].as_f64().unwrap();
    assert!(err > 0.0 && err <= 2e-6, "max_abs_error {err}");
    for stage in ["encode", "encrypt", "compute", "decrypt", "total"] {
        assert!(w["median_us"][stage].as_f64().unwrap() > 0.0, "{stage}");
    }
    assert!(w["workloads_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn scaling_reports_throughput_per_thread_count() {
    let (ok, out, err) = triskel(
        &[
            "bench",
            "scaling",
            "--only",
            "ckks.poly_x2",
            "--threads",
            "2",
            "--rounds",
            "1",
            "--json",
        ],
        &[],
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let w = &v["workloads"][0];
    assert_eq!(w["name"], "ckks.poly_x2");
    let (one, two) = (
        w["throughput"]["1"].as_f64().unwrap(),
        w["throughput"]["2"].as_f64().unwrap(),
    );
    assert!(one > 0.0 && two > 0.0, "{w}");
    let ratio = w["scaling"]["2"].as_f64().unwrap();
    assert!((ratio - two / one).abs() < 1e-9, "{w}");
    for k in ["1", "2"] {
        assert!(w["spread_latency_us"][k].as_f64().unwrap() > 0.0, "{w}");
    }
    if cfg!(target_os = "linux") {
        assert!(w["peak_rss_mb"].as_f64().unwrap() > 0.0, "{w}");
    }
}

/// Every CKKS workload decrypts within 2e-6 of its float64 computation,
/// each on the set it is benched on.
#[test]
fn every_ckks_workload_is_within_its_error_goal() {
    let workloads = [
        ("ckks.mul_pipeline", "ckks-n8192"),
        ("ckks.rotate", "ckks-n8192"),
        ("ckks.slot_sum64", "ckks-n8192"),
        ("ckks.dot64", "ckks-n8192"),
        ("ckks.poly_x2", "ckks-n8192"),
        ("ckks.poly_deg7", "ckks-n8192-d3"),
        ("ckks.dense_64x4", "ckks-n8192"),
        ("ckks.mlp_64_4_1", "ckks-n16384"),
        ("ckks.mlp_64_4_1_square", "ckks-n8192-d3"),
        ("ckks.mul_pipeline_16384", "ckks-n16384-d2"),
    ];
    for (name, params) in workloads {
        let w = verified_workload(name, params);
        let error = w["max_abs_error"].as_f64().unwrap();
        assert!(
            error > 0.0 && error <= 2e-6,
            "{name}: max_abs_error {error}"
        );
    }
}

/// The TFHE workloads run on the multi-bit sets (their default) and check their decrypted results.
#[test]
fn tfhe_workloads_run_on_the_multi_bit_sets() {
    let workloads = [
        ("tfhe.gate_nand", "TFHE_BOOLEAN_MULTI_BIT_2M128_V2"),
        ("tfhe.pbs_2_2", "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2"),
        ("tfhe.uint8_gt", "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2"),
        (
            "tfhe.uint8_add",
            "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2",
        ),
        (
            "tfhe.uint64_add",
            "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2",
        ),
        (
            "tfhe.uint64_mul",
            "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2",
        ),
    ];
    for (name, params) in workloads {
        let w = verified_workload(name, params);
        assert_eq!(w["max_abs_error"], 0.0, "{name}");
    }
}

/// Runs one workload (`bench workloads --only name --json`) and checks that
/// it ran on `params` and verified its result; returns its JSON report.
fn verified_workload(name: &str, params: &str) -> serde_json::Value {
    let (ok, out, err) = triskel(&["bench", "workloads", "--only", name, "--json"], &[]);
    assert!(ok, "{name}: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let w = v["workloads"][0].clone();
    assert_eq!(w["name"], name);
    assert_eq!(w["params"], params, "{name}");
    assert_eq!(w["verified"], true, "{name}");
    w
}

#[test]
fn square_activation_network_runs_at_n8192_on_the_cpu_clock() {
    let (ok, out, err) = triskel(
        &[
            "bench",
            "workloads",
            "--only",
            "ckks.mlp_64_4_1_square",
            "--json",
        ],
        &[("TRISKEL_BENCH_CLOCK", "cpu")],
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let w = &v["workloads"][0];
    assert_eq!(w["params"], "ckks-n8192-d3");
    assert_eq!(w["verified"], true);
    let compute = w["median_us"]["compute"].as_f64().unwrap();
    assert!(compute.is_finite() && compute > 0.0, "compute {compute}");
}

#[test]
fn explain_prints_the_plans_of_the_demo_programs() {
    let dir = std::env::temp_dir().join(format!("triskel-explain-{}", std::process::id()));
    let (ok, out, err) = triskel(
        &["explain"],
        &[("TRISKEL_CACHE_DIR", dir.to_str().unwrap())],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("built-in table"),
        "no cache in a fresh directory: {out}"
    );
    for needle in [
        "keys (coefficients encoding, 0 rotations)",
        "transition bfv -> tfhe",
        "any(v2, v4",
        "ckks-n16384",
        "v2 = compare(v0, v1) -> 1 bits",
        "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2",
    ] {
        assert!(out.contains(needle), "{needle} missing from\n{out}");
    }
}

/// `--ckks-scale-log2 50` plans the CKKS demo on a set of scale 2^50 (the
/// network needs N = 32768 for its depth at that scale); 51 is refused.
#[test]
fn explain_plans_ckks_at_the_scale_asked() {
    let dir = std::env::temp_dir().join(format!("triskel-explain-scale-{}", std::process::id()));
    let env = [("TRISKEL_CACHE_DIR", dir.to_str().unwrap())];
    let (ok, out, err) = triskel(&["explain"], &env);
    assert!(ok, "{err}");
    assert!(
        out.contains("ckks-n16384 ") && !out.contains("-s50"),
        "{out}"
    );
    let (ok, out, err) = triskel(&["explain", "--ckks-scale-log2", "50"], &env);
    assert!(ok, "{err}");
    assert!(out.contains("ckks-n32768-s50"), "{out}");
    // The other demos have no CKKS part: their plans are unchanged.
    assert!(out.contains("bfv-n4096") && out.contains("TFHE_MESSAGE_2_CARRY_2"));
    let (ok, out, err) = triskel(&["explain", "--ckks-scale-log2", "51"], &env);
    assert!(!ok);
    // Refused before any plan is printed.
    assert!(!out.contains("nodes"), "{out}");
    assert!(
        err.contains("2^51") && err.contains("largest is 2^50"),
        "{err}"
    );
}

/// `--threads 2 --spread`: one run at a time, its blocks' bootstraps on both
/// threads: a latency, verified, with no throughput figure.
#[test]
fn spread_runs_one_operation_on_every_thread() {
    let (ok, out, err) = triskel(
        &[
            "bench",
            "workloads",
            "--only",
            "tfhe.uint8_add",
            "--json",
            "--threads",
            "2",
            "--spread",
        ],
        &[],
    );
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["threads"], 2);
    assert_eq!(v["parallelism"], "spread");
    let w = &v["workloads"][0];
    assert_eq!(w["verified"], true);
    assert!(w["median_us"]["total"].as_f64().unwrap() > 0.0);
    assert!(w.get("workloads_per_second").is_none());
}
