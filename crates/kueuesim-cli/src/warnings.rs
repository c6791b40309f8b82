//! Every `warning:` line the command prints goes through here, so that `--warnings` decides
//! in one place what reaches stderr: each line (`all`), one line counting them (`summary`),
//! or nothing (`none`). What is printed goes through `eprint_visible` (control characters
//! shown, not sent to the terminal).

use std::sync::Mutex;

/// `--warnings`: how the warnings of a command (the loader's, the capacity checks', the
/// command's own) are shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Shown {
    /// Each warning on its own line, as it comes.
    #[default]
    All,
    /// One line at the end saying how many there were.
    Summary,
    /// None.
    None,
}

/// The mode the command line chose, and how many warnings it held back. A process-wide
/// value because warnings come from deep in every command (the loader, the replicates, a
/// sweep's rows), and one setting applies to all of them.
static STATE: Mutex<(Shown, usize)> = Mutex::new((Shown::All, 0));

/// Sets the mode for the rest of the command (before anything is loaded).
pub(crate) fn show(mode: Shown) {
    *STATE.lock().unwrap_or_else(|e| e.into_inner()) = (mode, 0);
}

/// A warning: `warning: {message}`.
pub(crate) fn warn(message: &str) {
    emit(&format!("warning: {message}"));
}

/// A warning that only some of a sweep's variants gave: `warning ({variants}): {message}`.
pub(crate) fn warn_for(variants: &str, message: &str) {
    emit(&format!("warning ({variants}): {message}"));
}

fn emit(line: &str) {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    match state.0 {
        Shown::All => crate::eprint_visible(format_args!("{line}")),
        Shown::Summary | Shown::None => state.1 += 1,
    }
}

/// The line `--warnings=summary` prints once the command is done (None: nothing to say).
pub(crate) fn summary_line(mode: Shown, held_back: usize) -> Option<String> {
    if mode != Shown::Summary || held_back == 0 {
        return None;
    }
    let s = if held_back == 1 { "" } else { "s" };
    Some(format!(
        "warning: {held_back} warning{s} not shown (--warnings=all shows them)"
    ))
}

/// Prints the summary line of the warnings held back, if the mode asks for one.
pub(crate) fn finish() {
    let (mode, held_back) = *STATE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(line) = summary_line(mode, held_back) {
        crate::eprint_visible(format_args!("{line}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_what_was_held_back() {
        assert_eq!(
            summary_line(Shown::Summary, 2).as_deref(),
            Some("warning: 2 warnings not shown (--warnings=all shows them)")
        );
        assert_eq!(
            summary_line(Shown::Summary, 1).as_deref(),
            Some("warning: 1 warning not shown (--warnings=all shows them)")
        );
        assert_eq!(summary_line(Shown::Summary, 0), None);
        assert_eq!(summary_line(Shown::None, 3), None);
        assert_eq!(summary_line(Shown::All, 3), None);
    }
}
