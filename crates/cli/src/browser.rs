//! Opening a link in the system browser (`deltalens open`): `$BROWSER` when set (a
//! `:`-separated list, as xdg-utils reads it), else the platform's opener (`xdg-open`,
//! `open`, `start`). Whether one started is returned, so the caller can print the link
//! instead.

use std::process::{Command, Stdio};

/// The commands to try for `url`, first to last.
fn candidates(browser_var: Option<String>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = browser_var
        .unwrap_or_default()
        .split(':')
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(|b| vec![b.to_string()])
        .collect();
    let platform: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(windows) {
        &["cmd", "/C", "start", ""]
    } else {
        &["xdg-open"]
    };
    out.push(platform.iter().map(|s| s.to_string()).collect());
    out
}

/// Starts a browser on `url`; false when none could be started.
pub fn open(url: &str) -> bool {
    for cmd in candidates(std::env::var("BROWSER").ok()) {
        let Some((program, args)) = cmd.split_first() else {
            continue;
        };
        let started = Command::new(program)
            .args(args)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if started.is_ok() {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_variable_first_then_the_platform() {
        let c = candidates(Some("firefox: chromium".into()));
        assert_eq!(c[0], ["firefox"]);
        assert_eq!(c[1], ["chromium"]);
        assert_eq!(c.len(), 3);
        assert_eq!(candidates(None).len(), 1);
    }
}
