//! Writing results to stdout without panicking: `println!` panics when stdout
//! is closed or full, so every command writes through [`stdout`] with
//! `writeln!` and `?`, and `main` turns the error into a quiet end (closed
//! pipe) or an error message and exit 1 (anything else, e.g. ENOSPC).
use std::io::{ErrorKind, Write};

/// Locked stdout whose write errors say that they are stdout's.
pub struct Stdout(std::io::StdoutLock<'static>);

/// Locked stdout; write with `writeln!(out, ...)?`.
pub fn stdout() -> Stdout {
    Stdout(std::io::stdout().lock())
}

fn named(e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("writing to stdout: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(named)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// Whether the error (or anything in its chain) is a write to a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == ErrorKind::BrokenPipe))
}
