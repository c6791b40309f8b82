//! Criterion benchmarks of kueuesim.
