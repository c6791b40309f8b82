//! The `SimulationResult` document serialized: pretty JSON whole or streamed in pieces (head,
//! workloads, tail) so a long run's `result.json` is never held whole, the summary alone
//! (`summary.json`), and YAML.

use serde::Serialize;

use super::{SimulationResult, Summary, WorkloadOut};

/// The result as pretty JSON, newline-terminated.
pub fn to_json(result: &SimulationResult) -> String {
    let mut s = serde_json::to_string_pretty(result).expect("result is always serializable");
    s.push('\n');
    s
}

/// `to_json` written to `out` as it is serialized, never held whole (the hourly series of
/// many ClusterQueues over years are gigabytes of text).
pub fn write_json(result: &SimulationResult, out: &mut impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, result)?;
    out.write_all(b"\n")
}

/// A document's `apiVersion`, `kind` and `summary`: the head of `result.json`, the whole
/// of `summary.json`, and a run of `run --seeds --out`'s summary.json.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDoc<'a> {
    api_version: &'a str,
    kind: &'a str,
    summary: &'a Summary,
}

impl<'a> SummaryDoc<'a> {
    /// The result's summary alone, as a `SimulationSummary`.
    pub fn of(result: &'a SimulationResult) -> Self {
        SummaryDoc {
            api_version: result.api_version,
            kind: "SimulationSummary",
            summary: &result.summary,
        }
    }
}

/// `summary.json` of `run --out`: the document's summary alone, as a `SimulationSummary`
/// (`kueuesim compare` reads it; a large run's `result.json` is gigabytes of workloads).
pub fn summary_json(result: &SimulationResult) -> String {
    let mut s = Vec::new();
    write_summary_json(result, &mut s).expect("writing to memory");
    String::from_utf8(s).expect("JSON is UTF-8")
}

/// `summary_json` written to `out` as it is serialized, never held whole.
pub fn write_summary_json(
    result: &SimulationResult,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &SummaryDoc::of(result))?;
    out.write_all(b"\n")
}

/// The document's opening up to its `workloads` list, as `to_json` writes it: what a
/// streamed `result.json` writes before its workloads (`json_workload`, joined by `,\n`)
/// and `json_tail`.
pub fn json_head(result: &SimulationResult) -> String {
    let mut s = Vec::new();
    write_json_head(result, &mut s).expect("writing to memory");
    String::from_utf8(s).expect("JSON is UTF-8")
}

/// `json_head` written to `out` as it is serialized, never held whole.
pub fn write_json_head(
    result: &SimulationResult,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let head = SummaryDoc {
        api_version: result.api_version,
        kind: result.kind,
        summary: &result.summary,
    };
    let mut w = HoldBack {
        out: &mut *out,
        held: Vec::with_capacity(4),
    };
    serde_json::to_writer_pretty(&mut w, &head)?;
    // The object's closing brace gives way to the workloads list.
    if w.held != b"\n}" {
        let held = std::mem::take(&mut w.held);
        out.write_all(&held)?;
    }
    out.write_all(b",\n  \"workloads\": [")
}

/// A writer that passes everything on to `out` but its last two bytes, kept in `held`: the
/// closing brace of a pretty JSON object, to be left out.
struct HoldBack<W> {
    out: W,
    held: Vec<u8>,
}

impl<W: std::io::Write> std::io::Write for HoldBack<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(buf);
        let pass = self.held.len().saturating_sub(2);
        self.out.write_all(&self.held[..pass])?;
        self.held.drain(..pass);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// One workload as `to_json` writes it inside the document's `workloads` list (indented two
/// levels), without a separator.
pub fn json_workload(w: &WorkloadOut) -> String {
    let item = serde_json::to_string_pretty(w).expect("result is always serializable");
    let mut s = String::with_capacity(item.len() + item.len() / 8);
    for (i, line) in item.split('\n').enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str("    ");
        s.push_str(line);
    }
    s
}

/// The end of the document after its workloads (`any`: the list is not empty).
pub fn json_tail(any: bool) -> &'static str {
    if any { "\n  ]\n}\n" } else { "]\n}\n" }
}

/// The result as YAML.
pub fn to_yaml(result: &SimulationResult) -> String {
    serde_saphyr::to_string(result).expect("result is always serializable")
}
