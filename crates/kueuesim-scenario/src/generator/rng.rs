//! The seeded randomness of generators: splitmix64 to expand a seed, FNV-1a to give each
//! generator its own stream from one Simulation seed, and xoshiro256** (`Rng`) with the
//! uniform, ranged and normal draws the distributions use.

/// splitmix64: expands one seed into well-mixed state words.
pub(super) fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a name, so each generator gets its own stream from one Simulation seed.
pub(crate) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// xoshiro256** (Blackman and Vigna): small, fast, and good enough for workload synthesis.
#[derive(Clone, Debug)]
pub struct Rng([u64; 4]);

impl Rng {
    /// A stream from a seed.
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        Rng([
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ])
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo) as u64 + 1;
        // Lemire's multiply-shift; the bias is below 2^-64 × span, irrelevant here.
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as i64
    }

    /// Standard normal (Box–Muller; the second value is dropped so draws stay one per call).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}
