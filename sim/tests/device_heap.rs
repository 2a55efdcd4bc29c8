//! The device heap registered with the MLU (sim::device_heap, the MLU's heap
//! window): the directory's nodes against values computed here from the
//! allocator's documented geometry, the tag rule against an LFSR written out
//! here, and random in-kernel malloc/free/access sequences through the
//! runtime's MLU, in both modes, against what the test's own record of the
//! allocations says each access must give.
use proptest::prelude::*;
use sim::canary::alloc_unit::rtl_heap_config;
use sim::canary::heap::{CheckMode, FreeError, HeapConfig};
use sim::config::{Mode, MluConfig, Structure};
use sim::device_heap::{DeviceHeap, DEFAULT_DIRECTORY_BASE};
use sim::fault::FaultCode;
use sim::runtime::{Runtime, RuntimeConfig, RuntimeError};

const DIR: u64 = DEFAULT_DIRECTORY_BASE;
/// The RTL geometry (sim::canary::alloc_unit::rtl_heap_config).
const BASE: u64 = 0x1000_0000;
const PAGE: u64 = 256;
const CLASSES: [u64; 4] = [32, 64, 128, 256];

fn tagged(check: CheckMode, seed: u16) -> HeapConfig {
    HeapConfig { tag_seed: Some(seed), ..rtl_heap_config(check, 0) }
}

/// The chunk size a request of `size` bytes gets with canaries (16 bytes).
fn class_of(size: u64) -> u64 {
    CLASSES.into_iter().find(|&c| c >= size + 16).expect("fits the largest class")
}

/// x^16 + x^14 + x^13 + x^11 + 1, Galois form, one step per tag; its low
/// byte folded to 1..=253 and moved up by one at or above the chunk's
/// previous tag (sim::canary::heap's module doc), written out here.
struct Lfsr(u16);
impl Lfsr {
    fn tag(&mut self, prev: Option<u8>) -> u8 {
        let out = self.0 & 1;
        self.0 >>= 1;
        if out == 1 {
            self.0 ^= 0xB400;
        }
        let t = (self.0 & 0xFF) as u16 % 253 + 1;
        let t = match prev {
            Some(p) if t >= p as u16 => t + 1,
            _ => t,
        };
        assert!((1..=254).contains(&t) && Some(t as u8) != prev);
        t as u8
    }
}

fn word(d: &DeviceHeap, addr: u64) -> u64 {
    d.read_word(addr).expect("inside the directory").expect("no error")
}

#[test]
fn directory_node_of_every_granule_holds_its_chunk() {
    let mut d = DeviceHeap::new(tagged(CheckMode::Free, 7), DIR).unwrap();
    let mut lfsr = Lfsr(7);
    let sizes = [40u64, 100, 16, 200, 40];
    let ptrs: Vec<u64> = sizes.iter().map(|&s| d.malloc(s, 0).unwrap().0.ptr).collect();
    for (&p, &size) in ptrs.iter().zip(&sizes) {
        let (tag, base) = (p >> 56, p & ((1 << 56) - 1));
        assert_eq!(tag as u8, lfsr.tag(None), "tags in LFSR order");
        let chunk = base - 8;
        let loc = DIR + (chunk - BASE);
        for g in (chunk..chunk + class_of(size)).step_by(32) {
            let node = DIR + (g - BASE);
            assert_eq!(word(&d, node), base, "base word of granule {g:#x}");
            assert_eq!(word(&d, node + 8), size | tag << 56, "size|tag word");
            assert_eq!(word(&d, node + 16), loc, "location word");
            assert_eq!(word(&d, node + 24), 0);
        }
    }
    // Free retags FREED and keeps the size; the location stays.
    let (p, size) = (ptrs[1], sizes[1]);
    d.free(p).unwrap();
    let node = DIR + (p & ((1 << 56) - 1)) - 8 - BASE;
    assert_eq!(word(&d, node + 8), size | 0xFF << 56);
    assert_eq!(word(&d, node + 16), node);
    // A page that never served a class: no chunk (all zeros); outside the
    // directory the memory image answers (None).
    let used: Vec<u64> = ptrs.iter().map(|p| ((p & ((1 << 56) - 1)) - BASE) / PAGE).collect();
    let idle = (0..16).find(|pg| !used.contains(pg)).unwrap();
    for off in [0, 8, 16, 24] {
        assert_eq!(word(&d, DIR + idle * PAGE + off), 0);
    }
    assert!(d.read_word(DIR - 8).is_none() && d.read_word(DIR + 16 * PAGE).is_none());
    assert!(matches!(d.read_word(DIR + 4), Some(Err(_))), "unaligned read");
}

#[test]
fn a_reused_chunk_never_gets_its_last_tag() {
    let mut d = DeviceHeap::new(tagged(CheckMode::Free, 1), DIR).unwrap();
    let mut lfsr = Lfsr(1);
    let first = d.malloc(40, 0).unwrap().0;
    assert_eq!((first.ptr >> 56) as u8, lfsr.tag(None));
    let mut prev = first.clone();
    // The same request from the same requester reuses the same chunk (the
    // hashed page's lowest free slot): 600 generations of one chunk.
    for _ in 0..600 {
        d.free(prev.ptr).unwrap();
        let a = d.malloc(40, 0).unwrap().0;
        assert_eq!(a.chunk, first.chunk);
        let t = (a.ptr >> 56) as u8;
        assert_eq!(t, lfsr.tag(Some((prev.ptr >> 56) as u8)));
        assert_ne!(t, (prev.ptr >> 56) as u8, "the chunk's last tag again");
        // The previous generation's pointer can no longer free the chunk.
        assert_eq!(d.free(prev.ptr), Err(FreeError::DoubleFree { ptr: prev.ptr }));
        prev = a;
    }
}

#[test]
fn bad_device_heaps_and_overlaps_are_refused_by_field() {
    let err = DeviceHeap::new(rtl_heap_config(CheckMode::Free, 0), DIR).unwrap_err();
    assert!(err.starts_with("tag_seed:"), "{err}");
    let err = DeviceHeap::new(tagged(CheckMode::Free, 0), DIR).unwrap_err();
    assert!(err.starts_with("tag_seed:"), "{err}");
    let err = DeviceHeap::new(tagged(CheckMode::Free, 1), BASE).unwrap_err();
    assert!(err.starts_with("directory:") && err.contains("overlaps the heap"), "{err}");
    // The window is the heap's size rounded up to a power of two (4 KiB
    // here): the base and the directory must be aligned to it.
    let err = DeviceHeap::new(tagged(CheckMode::Free, 1), DIR + 2048).unwrap_err();
    assert!(err.starts_with("directory:") && err.contains("aligned"), "{err}");
    let err = DeviceHeap::new(HeapConfig { base: BASE + 2048, ..tagged(CheckMode::Free, 1) }, DIR).unwrap_err();
    assert!(err.starts_with("base:") && err.contains("aligned"), "{err}");
    let w = DeviceHeap::new(tagged(CheckMode::Free, 1), DIR).unwrap().window();
    assert_eq!((w.base, w.mask, w.dir), (BASE, 16 * PAGE - 1, DIR));
    let err = DeviceHeap::new(tagged(CheckMode::Free, 1), DIR + 8).unwrap_err();
    assert!(err.starts_with("directory:"), "{err}");

    let mut rt = Runtime::new(RuntimeConfig::default()).unwrap();
    let pool = rt.config().node_pool_base;
    let e = rt.attach_device_heap(tagged(CheckMode::Free, 1), pool).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("device_heap"), "{e}");
    rt.attach_device_heap(tagged(CheckMode::Free, 1), DIR).unwrap();
    let e = rt.attach_device_heap(tagged(CheckMode::Free, 1), DIR).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("device_heap"), "attached twice: {e}");
    // A host allocation may not overlap the heap or its directory.
    assert_eq!(rt.malloc(64, Some(BASE + 100)), Err(RuntimeError::OverlapsDeviceHeap { base: BASE + 100, size: 64 }));
    assert_eq!(rt.malloc(64, Some(DIR - 32)), Err(RuntimeError::OverlapsDeviceHeap { base: DIR - 32, size: 64 }));
    rt.malloc(64, Some(BASE + 16 * PAGE)).unwrap();
}

/// One allocation as the test records it.
#[derive(Clone, Copy, Debug)]
struct Rec {
    ptr: u64,
    size: u64,
    chunk: u64,
    class: u64,
    freed: bool,
    /// A later allocation's chunk overlaps this one's.
    reused: bool,
}

#[derive(Clone, Debug)]
enum Step {
    Malloc(u64),
    Free(usize),
    Access { pick: usize, off: i64, width: u32 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1u64..=240).prop_map(Step::Malloc),
        2 => any::<usize>().prop_map(Step::Free),
        6 => (any::<usize>(), -24i64..280, prop::sample::select(vec![1u32, 2, 4, 8, 16]))
            .prop_map(|(pick, off, width)| Step::Access { pick, off, width }),
    ]
}

fn run_steps(mode: Mode, steps: &[Step]) -> Result<(), TestCaseError> {
    let cfg = RuntimeConfig { mlu: MluConfig { mode, structure: Structure::Bst, entries: 4, ..MluConfig::default() }, ..RuntimeConfig::default() };
    let mut rt = Runtime::new(cfg).unwrap();
    rt.attach_device_heap(tagged(CheckMode::Free, 99), DIR).unwrap();
    let mut recs: Vec<Rec> = Vec::new();
    for s in steps {
        match *s {
            Step::Malloc(size) => {
                let Ok(p) = rt.device_malloc(size, 0) else { continue };
                let chunk = (p & ((1 << 56) - 1)) - 8;
                let class = class_of(size);
                for r in recs.iter_mut() {
                    if r.chunk < chunk + class && chunk < r.chunk + r.class {
                        prop_assert!(r.freed, "a live chunk overlaps a new one");
                        r.reused = true;
                    }
                }
                recs.push(Rec { ptr: p, size, chunk, class, freed: false, reused: false });
            }
            Step::Free(pick) if !recs.is_empty() => {
                let i = pick % recs.len();
                let r = recs[i];
                let got = rt.device_free(r.ptr);
                if r.freed {
                    // Refused, unless the chunk's new owner drew the stale
                    // pointer's tag (possible two or more generations on:
                    // the allocator excludes only the chunk's last tag); then
                    // the allocator cannot tell, and frees the owner.
                    match got {
                        Err(_) => {}
                        Ok(f) => {
                            let owner = recs.iter().position(|o| !o.freed && o.ptr == r.ptr);
                            prop_assert!(owner.is_some() && f.chunk == r.chunk, "second free of {:#x} accepted", r.ptr);
                            recs[owner.unwrap()].freed = true;
                        }
                    }
                } else {
                    prop_assert_eq!(got.map(|f| (f.chunk, f.size, f.overflow)), Ok((r.chunk, r.size, None)));
                    recs[i].freed = true;
                }
            }
            Step::Access { pick, off, width } if !recs.is_empty() => {
                let r = recs[pick % recs.len()];
                let p = r.ptr.wrapping_add(off as u64);
                let a = (r.ptr & ((1 << 56) - 1)) as i128 + off as i128;
                let got = rt.access(p, width, Some(r.ptr)).map_err(|f| f.code);
                let inside = off >= 0 && off as u64 + width as u64 <= r.size;
                let in_chunk = a >= r.chunk as i128 && a < (r.chunk + r.class) as i128;
                if !r.freed {
                    if inside {
                        prop_assert_eq!(got, Ok(a as u64), "in-bounds access of a live chunk");
                    } else if mode == Mode::Compiler || in_chunk {
                        // Compiler: the root is the chunk's own pointer.
                        // HWONLY: the address itself lies in the chunk.
                        prop_assert_eq!(got, Err(FaultCode::OutOfBounds), "off {} width {} size {}", off, width, r.size);
                    } else {
                        // HWONLY outside the chunk: never silently passed
                        // unless it lands in a live chunk of the same tag.
                        let same_tag_owner = recs.iter().any(|o| {
                            !o.freed && o.ptr >> 56 == r.ptr >> 56 && a >= (o.ptr & ((1 << 56) - 1)) as i128 && a + (width as i128) <= ((o.ptr & ((1 << 56) - 1)) + o.size) as i128
                        });
                        prop_assert!(got.is_err() || same_tag_owner, "{:?} for an access outside the chunk", got);
                    }
                } else if !r.reused && (mode == Mode::Compiler || in_chunk) {
                    // The page re-laid out for another class since: the
                    // address's chunk under the new class may never have
                    // been allocated (NO_META); else the FREED record.
                    let page = |c: u64| (c - BASE) / PAGE;
                    let relaid = recs.iter().any(|o| page(o.chunk) == page(r.chunk) && o.class != r.class);
                    if relaid {
                        prop_assert!(matches!(got, Err(FaultCode::UseAfterFree | FaultCode::NoMeta)), "{:?}", got);
                    } else {
                        prop_assert_eq!(got, Err(FaultCode::UseAfterFree), "dangling pointer into an unreused chunk");
                    }
                } else if mode == Mode::Compiler || in_chunk {
                    // Reused memory: never a pass unless a live owner of the
                    // looked-up chunk has the stale tag.
                    let same_tag = recs.iter().any(|o| !o.freed && o.ptr >> 56 == r.ptr >> 56);
                    prop_assert!(got.is_err() || same_tag, "{:?} through a stale pointer", got);
                }
            }
            _ => {}
        }
        rt.device_heap().unwrap().heap().check_invariants().map_err(TestCaseError::fail)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn random_kernels_compiler_mode(steps in prop::collection::vec(step(), 1..120)) {
        run_steps(Mode::Compiler, &steps)?;
    }
    #[test]
    fn random_kernels_hwonly_mode(steps in prop::collection::vec(step(), 1..120)) {
        run_steps(Mode::Hwonly, &steps)?;
    }
}

