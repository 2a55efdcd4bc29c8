//! Independent jobs on every core: the synthesis flow's runs of one top
//! (flat and hierarchical mapping, one gate-level run per workload), and
//! tests that loop over tops (cargo runs the test binaries one after
//! another, so a test that checks one top at a time leaves the other cores
//! idle once its binary's short tests are done).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` on every item, on `available_parallelism` threads; the results in the
/// items' order. A panic in `f` fails the call (after the other threads
/// stop taking items) with the item's panic message.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_on(std::thread::available_parallelism().map_or(1, |n| n.get()), items, f)
}

/// [`map`] on at most `threads` threads (at least one), as `mlugen sweep
/// --threads` asks.
pub fn map_on<T: Sync, R: Send>(threads: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.min(items.len()).max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item)));
                    match r {
                        Ok(r) => results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r),
                        Err(e) => {
                            // No new items anywhere: fail as soon as the running ones end.
                            next.store(items.len(), Ordering::Relaxed);
                            std::panic::resume_unwind(e);
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            if let Err(e) = w.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().map(|r| r.expect("every item ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::map;

    #[test]
    fn results_keep_the_items_order() {
        let items: Vec<u64> = (0..100).collect();
        assert_eq!(map(&items, |x| x * x), items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert!(map(&[] as &[u64], |x| *x).is_empty());
    }

    #[test]
    fn a_panicking_item_fails_the_call() {
        let items: Vec<u64> = (0..20).collect();
        let r = std::panic::catch_unwind(|| map(&items, |&x| assert!(x != 7, "item {x} fails")));
        let msg = r.unwrap_err();
        let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("item 7 fails"), "{msg}");
    }
}
