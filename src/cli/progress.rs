//! Progress on stderr: an indicatif bar (or spinner, for stages of unknown
//! length) when stderr is a terminal; otherwise plain lines, one per tenth of
//! the work, so a log file gets readable lines instead of carriage returns;
//! nothing with `--quiet`. Results never go through here: they are on stdout.
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: set once by `main`.
pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A note on stderr (`mlugen <cmd>: ...`) unless `--quiet`.
pub fn note(text: &str) {
    if !quiet() {
        eprintln!("{text}");
    }
}

enum Kind {
    Off,
    Bar(ProgressBar),
    /// Plain lines: the last tenth printed.
    Lines(AtomicU64),
}

/// Progress of a counted piece of work (`total` units) or, with
/// [`Progress::stage`], of a stage that only starts and ends.
pub struct Progress {
    kind: Kind,
    label: String,
    unit: &'static str,
    total: u64,
    t0: Instant,
}

impl Progress {
    /// `label` names the work (`mlugen sweep: runs`), `unit` what is counted.
    pub fn new(label: &str, unit: &'static str, total: u64) -> Progress {
        let kind = if quiet() {
            Kind::Off
        } else if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:32}] {pos}/{len} {prefix} ({elapsed}, eta {eta})")
                    .expect("constant template")
                    .progress_chars("=> "),
            );
            b.set_message(label.to_string());
            b.set_prefix(unit);
            Kind::Bar(b)
        } else {
            eprintln!("{label}: 0/{total} {unit}");
            Kind::Lines(AtomicU64::new(0))
        };
        Progress { kind, label: label.to_string(), unit, total, t0: Instant::now() }
    }

    /// A stage of unknown length (a build, a synthesis step): a spinner, or
    /// one line when it starts and one when [`Progress::finish`] ends it.
    pub fn stage(label: &str) -> Progress {
        let kind = if quiet() {
            Kind::Off
        } else if std::io::stderr().is_terminal() {
            let b = ProgressBar::new_spinner();
            b.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("constant template"));
            b.set_message(label.to_string());
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            Kind::Bar(b)
        } else {
            eprintln!("{label} ...");
            Kind::Lines(AtomicU64::new(0))
        };
        Progress { kind, label: label.to_string(), unit: "", total: 0, t0: Instant::now() }
    }

    /// `done` of `total` units are finished (callable from any thread).
    pub fn set(&self, done: u64) {
        match &self.kind {
            Kind::Off => {}
            Kind::Bar(b) => b.set_position(done),
            Kind::Lines(last) => {
                let tenth = if self.total == 0 { 10 } else { (done.min(self.total) * 10) / self.total };
                if last.fetch_max(tenth, Ordering::Relaxed) < tenth {
                    eprintln!("{}: {done}/{} {} ({:.1} s)", self.label, self.total, self.unit, self.t0.elapsed().as_secs_f64());
                }
            }
        }
    }

    /// The work is over; `result` is a short summary shown after the label.
    pub fn finish(&self, result: &str) {
        match &self.kind {
            Kind::Off => {}
            Kind::Bar(b) => {
                b.finish_and_clear();
                eprintln!("{}: {result} ({:.1} s)", self.label, self.t0.elapsed().as_secs_f64());
            }
            Kind::Lines(_) => eprintln!("{}: {result} ({:.1} s)", self.label, self.t0.elapsed().as_secs_f64()),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Kind::Bar(b) = &self.kind {
            if !b.is_finished() {
                b.finish_and_clear();
            }
        }
    }
}
