//! `Rng`: the seeded generator of the testbenches' stimuli (vectors, energy
//! workloads): the runtime's splitmix64 stepped on a state of its own.
/// splitmix64: small, seedable, and the same generator the runtime uses
/// for tags, so tests are reproducible from a seed.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        // The runtime's generator, one step on this state.
        let mut g = sim::runtime::SplitMix64(self.0);
        let v = g.next_u64();
        self.0 = g.0;
        v
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}
