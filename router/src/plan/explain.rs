//! Rendering a plan: its canonical route (what attestation binds) and
//! the explanation a user reads.

use super::*;

pub(crate) fn describe_node(p: &Program, i: usize) -> String {
    let node = &p.nodes[i];
    let args: Vec<String> = node.op.operands().iter().map(|a| format!("v{a}")).collect();
    match &node.op {
        Op::Input { name, .. } => format!("v{i} = input {name:?} ({})", node.kind.describe()),
        op => format!(
            "v{i} = {}({}) -> {}",
            op.name(),
            args.join(", "),
            node.kind.describe()
        ),
    }
}

pub(crate) fn params_name(plan: &Plan, place: Placement) -> String {
    match place {
        Placement::Bfv(k) => plan.bfv[k].params.name().to_string(),
        Placement::Ckks => plan.ckks.as_ref().map_or("", |s| s.name()).to_string(),
        Placement::Tfhe | Placement::BfvToTfhe(_) | Placement::CkksToTfhe => {
            tfhe_set().name.to_string()
        }
    }
}

impl Plan {
    /// A canonical one-line description of the computation and its routing
    /// decision (the program's digest, [`triskel_attest::program_digest`] of
    /// its bytes, then sets, placements, transitions, key-holder round
    /// trips): what attestation binds.
    pub fn route(&self) -> String {
        let digest = triskel_attest::program_digest(&self.program.to_bytes());
        let mut s = format!("program:{};", triskel_attest::hex(&digest));
        for part in &self.bfv {
            let _ = write!(s, "bfv:{}:{:?};", part.params.name(), part.encoding);
        }
        if let Some(c) = &self.ckks {
            let _ = write!(s, "ckks:{};", c.name());
        }
        if let Some(t) = &self.tfhe {
            let _ = write!(s, "tfhe:{};", t.name);
        }
        for (i, place) in self.placements.iter().enumerate() {
            let _ = write!(s, "v{i}:{}", place.engine().name());
            match place {
                Placement::BfvToTfhe(_) => s += "(transition bfv->tfhe, homomorphic)",
                Placement::CkksToTfhe => s += "(transition ckks->tfhe, homomorphic)",
                _ => {}
            }
            if let Some((_, from)) = self.round_trips.iter().find(|&&(n, _)| n == i) {
                let _ = write!(
                    s,
                    "(round trip {}->{}, key holder)",
                    from.name(),
                    place.engine().name()
                );
            }
            s += ";";
        }
        s += "round-trips:";
        if self.round_trips.is_empty() {
            s += "none";
        }
        for (k, (i, from)) in self.round_trips.iter().enumerate() {
            let to = self.placements[*i].engine();
            let sep = if k > 0 { "," } else { "" };
            let _ = write!(s, "{sep}v{i}({}->{})", from.name(), to.name());
        }
        s
    }

    /// Steps whose prediction is more than `factor` off their measured time
    /// (either way), after a run.
    pub fn steps_off_by(&self, factor: f64) -> Vec<usize> {
        (0..self.steps.len())
            .filter(|&k| {
                self.steps[k]
                    .ratio()
                    .is_some_and(|r| r > factor || r < 1.0 / factor)
            })
            .collect()
    }

    /// The plan as a table: each step's engine, parameter set, predicted
    /// time and, after a run, the measured time and predicted / measured
    /// (`!` when more than 2x off), then the totals' ratio line.
    pub fn explain(&self) -> String {
        let ms = |ns: f64| format!("{:.3} ms", ns / 1e6);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<5} {:<5} {:<34} {:>12} {:>12} {:>7}  step",
            "#", "eng", "parameter set", "predicted", "measured", "p/m"
        );
        let off = self.steps_off_by(2.0);
        for (k, s) in self.steps.iter().enumerate() {
            let measured = s.measured_ns.map_or("-".to_string(), ms);
            let ratio = s.ratio().map_or("-".to_string(), |r| {
                format!("{r:.2}{}", if off.contains(&k) { "!" } else { " " })
            });
            let _ = writeln!(
                out,
                "{k:<5} {:<5} {:<34} {:>12} {:>12} {ratio:>7}  {}",
                s.engine.name(),
                s.params,
                ms(s.predicted_ns),
                measured,
                s.label
            );
        }
        let measured: Option<f64> = self.steps.iter().map(|s| s.measured_ns).sum();
        let _ = writeln!(
            out,
            "total predicted {}, measured {}; planning took {}",
            ms(self.predicted_ns()),
            measured.map_or("-".to_string(), ms),
            ms(self.planning_ns)
        );
        let _ = writeln!(
            out,
            "ciphertexts held: at most {:.1} MiB",
            self.ciphertext_bytes() as f64 / f64::from(1 << 20)
        );
        if let Some(m) = measured {
            let off_ns: f64 = off.iter().filter_map(|&k| self.steps[k].measured_ns).sum();
            let _ = writeln!(
                out,
                "predicted / measured: {:.2}; steps more than 2x off: {} ({:.1}% of the measured time)",
                self.predicted_ns() / m,
                if off.is_empty() {
                    "none".to_string()
                } else {
                    format!("{off:?}")
                },
                100.0 * off_ns / m
            );
        }
        if let Some(t) = self.options.threshold {
            let _ = writeln!(
                out,
                "threshold keys: {} of {} parties, made without a dealer in 2 rounds (round 1: \
                 public-key, Galois and first relinearization shares to all{}; round 2: second \
                 relinearization shares to all); decryption: one flooded share from each of {} \
                 parties, combined by any of them",
                t.k,
                t.n,
                if t.k < t.n {
                    ", and a private Shamir deal to each party"
                } else {
                    ""
                },
                t.k
            );
        }
        for &(i, from) in &self.round_trips {
            let _ = writeln!(
                out,
                "key-holder round trip at v{i}: {} -> {} (the key holder decrypts and re-encrypts; no homomorphic path)",
                from.name(),
                self.placements[i].engine().name()
            );
        }
        let unused = self.unused_inputs();
        if !unused.is_empty() {
            let _ = writeln!(
                out,
                "inputs no output reads: {} (keyed and encrypted all the same)",
                unused.join(", ")
            );
        }
        out
    }

    /// Names of the inputs from which no output is computed.
    pub fn unused_inputs(&self) -> Vec<&str> {
        let nodes = &self.program.nodes;
        let mut read = vec![false; nodes.len()];
        for (_, i) in self.program.outputs() {
            read[i] = true;
        }
        // Operands come before their nodes: one backward pass marks them all.
        for i in (0..nodes.len()).rev() {
            if read[i] {
                for a in nodes[i].op.operands() {
                    read[a as usize] = true;
                }
            }
        }
        nodes
            .iter()
            .zip(&read)
            .filter_map(|(node, &r)| match &node.op {
                Op::Input { name, .. } if !r => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }
}
