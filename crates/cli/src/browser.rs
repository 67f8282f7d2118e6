//! Opening a link in the system browser (`deltalens open`): `$BROWSER` when set (a
//! `:`-separated list, as xdg-utils reads it), else the platform's opener (`xdg-open`,
//! `open`, `rundll32 url.dll,FileProtocolHandler`). Never through a shell: the URL is one
//! argument of the program (`cmd /C start` would run what follows a `&` in it as another
//! command). Whether one started is returned, so the caller can print the link instead.

use std::process::{Command, Stdio};

/// The system a browser is opened on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Os {
    Mac,
    Windows,
    /// Linux and the other Unix systems (xdg-utils).
    Other,
}

impl Os {
    const HERE: Os = if cfg!(target_os = "macos") {
        Os::Mac
    } else if cfg!(windows) {
        Os::Windows
    } else {
        Os::Other
    };
}

/// The commands to try for `url`, first to last.
fn candidates(os: Os, browser_var: Option<String>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = browser_var
        .unwrap_or_default()
        .split(':')
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(|b| vec![b.to_string()])
        .collect();
    let platform: &[&str] = match os {
        Os::Mac => &["open"],
        // the system's URL handler, as ShellExecute runs it (no cmd.exe)
        Os::Windows => &["rundll32.exe", "url.dll,FileProtocolHandler"],
        Os::Other => &["xdg-open"],
    };
    out.push(platform.iter().map(|s| s.to_string()).collect());
    out
}

/// The argv of each command to try for `url`, first to last: the URL is always the last
/// argument, whole.
fn commands(os: Os, browser_var: Option<String>, url: &str) -> Vec<Vec<String>> {
    let mut all = candidates(os, browser_var);
    for c in &mut all {
        c.push(url.to_string());
    }
    all
}

/// Starts a browser on `url`; false when none could be started.
pub fn open(url: &str) -> bool {
    for cmd in commands(Os::HERE, std::env::var("BROWSER").ok(), url) {
        let Some((program, args)) = cmd.split_first() else {
            continue;
        };
        let started = Command::new(program)
            .args(args)
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
        let c = candidates(Os::Other, Some("firefox: chromium".into()));
        assert_eq!(c[0], ["firefox"]);
        assert_eq!(c[1], ["chromium"]);
        assert_eq!(c.len(), 3);
        assert_eq!(candidates(Os::Other, None).len(), 1);
    }

    /// Audit #31, 12: no shell on any system: the URL is one argument of the opener
    /// (`cmd /C start` would run what follows a `&` as another command).
    #[test]
    fn no_shell_opens_the_browser() {
        let url = "http://127.0.0.1:8080/?table=a&calc.exe&token=x";
        for (os, opener) in [
            (Os::Other, "xdg-open"),
            (Os::Mac, "open"),
            (Os::Windows, "rundll32.exe"),
        ] {
            let all = commands(os, Some("firefox".into()), url);
            assert_eq!(all[0], ["firefox", url], "{os:?}");
            let platform = &all[1];
            assert_eq!(platform[0], opener, "{os:?}");
            assert_eq!(platform.last().map(String::as_str), Some(url), "{os:?}");
            assert_eq!(
                platform.iter().filter(|a| a.contains("127.0.0.1")).count(),
                1
            );
            for shell in ["cmd", "cmd.exe", "sh", "bash", "powershell", "start", "/C"] {
                assert!(
                    !platform.iter().any(|a| a.eq_ignore_ascii_case(shell)),
                    "{os:?}: {platform:?}"
                );
            }
        }
    }
}
