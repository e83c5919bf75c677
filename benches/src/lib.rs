//! Criterion benches of triskel live in `benches/`; this library is empty on purpose.
