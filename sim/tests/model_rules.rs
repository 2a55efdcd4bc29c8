//! One test per rule of docs/design.md, on the golden model.
use sim::config::{Mode, MluConfig, Replacement, Structure};
use sim::fault::FaultCode;
use sim::pointer::{tag, tagged, untag, NO_META};
use sim::runtime::{Runtime, RuntimeConfig};

fn rt(structure: Structure, mode: Mode, entries: usize) -> Runtime {
    Runtime::new(RuntimeConfig {
        mlu: MluConfig { entries, structure, mode, replacement: Replacement::Plru, step_limit: 4096 },
        ..RuntimeConfig::default()
    })
    .unwrap()
}

fn code(r: Result<u64, sim::fault::Fault>) -> FaultCode {
    match r {
        Ok(_) => FaultCode::None,
        Err(f) => f.code,
    }
}

#[test]
fn smoke_all_structures_and_modes() {
    for s in [Structure::List, Structure::Bst, Structure::Sol] {
        for m in [Mode::Compiler, Mode::Hwonly] {
            let mut r = rt(s, m, 8);
            let a = r.malloc(2400, None).unwrap();
            let b = r.malloc(24, None).unwrap();
            assert_eq!(r.access(a, 4, None).unwrap(), untag(a));
            assert_eq!(code(r.access(a + 2400, 4, Some(a))), if m == Mode::Compiler { FaultCode::OutOfBounds } else { FaultCode::NoMeta });
            assert_eq!(code(r.access(b + 20, 8, None)), FaultCode::OutOfBounds);
            r.free(a).unwrap();
            assert_eq!(code(r.access(a, 4, None)), FaultCode::UseAfterFree);
            assert_eq!(code(r.access(tagged(0, 0), 8, None)), FaultCode::None);
            assert_eq!(r.loadmeta(tagged(tag(b), 0x10)).unwrap(), NO_META);
            r.check_invariants().unwrap();
        }
    }
}
