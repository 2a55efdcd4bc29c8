//! `mlugen trace FILE...`: validate gpuarmor-trace v1 files line by line and
//! print their summaries as one JSON object `{"traces": [summary, ...]}`.
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Trace files (`*.jsonl.gz`, gpuarmor-trace version 1).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut traces = Vec::with_capacity(args.files.len());
    for f in &args.files {
        // The error already names the file and line.
        traces.push(sim::trace::summarize(f)?);
    }
    // A struct, not `json!`, so the fields keep their declared order.
    #[derive(serde::Serialize)]
    struct Out<'a> {
        traces: &'a [sim::trace::TraceSummary],
    }
    use std::io::Write;
    writeln!(super::out::stdout(), "{}", serde_json::to_string_pretty(&Out { traces: &traces })?)?;
    Ok(())
}
