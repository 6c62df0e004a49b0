//! The tests' pseudo-random numbers, in a leaf of their own: a codec
//! module's tests (lzf.rs) use them without importing the end-to-end
//! tests (tests.rs), which use every codec module.

/// xorshift64: the generator the tests' vectors were made with (the same
/// code in a script fed the values to redis-server 7.0.15).
pub(crate) struct Gen(pub(crate) u64);

impl Gen {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
