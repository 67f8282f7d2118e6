//! AWS shared config and credentials files (`~/.aws/config`, `~/.aws/credentials`, or
//! `AWS_CONFIG_FILE` / `AWS_SHARED_CREDENTIALS_FILE`) for the profile `AWS_PROFILE` (else
//! `default`), as the AWS CLI reads them: static keys, or a `credential_process` whose
//! JSON answer is used until shortly before its `Expiration` and then asked again.
//! object_store reads the environment, instance metadata, container and web-identity
//! credentials itself, not these files.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use object_store::CredentialProvider;
use object_store::aws::AwsCredential;
use tokio::sync::Mutex;

/// How long a credential process may run.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(60);
/// Most bytes of a credential process's answer read.
const MAX_ANSWER: usize = 64 * 1024;
/// Credentials are replaced this long before they expire.
const MARGIN: Duration = Duration::from_secs(5 * 60);

/// What a profile gives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Profile {
    /// Builder options: keys, region, endpoint.
    pub(crate) options: Vec<(String, String)>,
    /// The command that prints credentials, when the profile has one.
    pub(crate) process: Option<String>,
}

/// The sections of an INI file: `[name]` → key → value (keys lowercased).
fn sections(text: &str) -> HashMap<String, HashMap<String, String>> {
    let mut out: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.trim().to_string());
            continue;
        }
        if let (Some(section), Some((k, v))) = (&current, line.split_once('=')) {
            out.entry(section.clone())
                .or_default()
                .insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    out
}

fn home_file(var: &str, rel: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env(var)
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(rel)))
}

/// The profile named by `AWS_PROFILE` (or `default`) from the shared files, if it says
/// anything; `env` looks up environment variables.
pub(crate) fn load(env: &dyn Fn(&str) -> Option<String>) -> Option<Profile> {
    let name = env("AWS_PROFILE")
        .or_else(|| env("AWS_DEFAULT_PROFILE"))
        .unwrap_or_else(|| "default".into());
    let read = |p: Option<PathBuf>| p.and_then(|p| std::fs::read_to_string(p).ok());
    let credentials = read(home_file(
        "AWS_SHARED_CREDENTIALS_FILE",
        ".aws/credentials",
        env,
    ))
    .map(|t| sections(&t))
    .unwrap_or_default();
    let config = read(home_file("AWS_CONFIG_FILE", ".aws/config", env))
        .map(|t| sections(&t))
        .unwrap_or_default();
    let config_name = if name == "default" {
        "default".to_string()
    } else {
        format!("profile {name}")
    };
    let mut merged: HashMap<String, String> = HashMap::new();
    for section in [config.get(&config_name), credentials.get(&name)]
        .into_iter()
        .flatten()
    {
        merged.extend(section.clone());
    }
    if merged.is_empty() {
        return None;
    }
    let mut options = Vec::new();
    for (key, option) in [
        ("aws_access_key_id", "aws_access_key_id"),
        ("aws_secret_access_key", "aws_secret_access_key"),
        ("aws_session_token", "aws_session_token"),
        ("region", "aws_region"),
        ("endpoint_url", "aws_endpoint"),
    ] {
        if let Some(v) = merged.get(key).filter(|v| !v.is_empty()) {
            options.push((option.to_string(), v.clone()));
        }
    }
    Some(Profile {
        options,
        process: merged
            .get("credential_process")
            .filter(|v| !v.is_empty())
            .cloned(),
    })
}

/// Credentials from a `credential_process`, cached until shortly before they expire.
#[derive(Debug)]
pub(crate) struct ProcessCredentials {
    command: String,
    current: Mutex<Option<(Arc<AwsCredential>, Option<SystemTime>)>>,
}

impl ProcessCredentials {
    pub(crate) fn new(command: String) -> Self {
        ProcessCredentials {
            command,
            current: Mutex::new(None),
        }
    }

    /// Runs the command (split like a shell would, without one) and reads its answer.
    async fn run(&self) -> Result<(AwsCredential, Option<SystemTime>), String> {
        let words = split_words(&self.command).ok_or_else(|| {
            format!(
                "credential_process {:?} has an unclosed quote",
                self.command
            )
        })?;
        let (program, args) = words
            .split_first()
            .ok_or_else(|| "credential_process is empty".to_string())?;
        let child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("credential_process {program:?} could not start: {e}"))?;
        let out = tokio::time::timeout(PROCESS_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| format!("credential_process {program:?} ran longer than 60 s"))?
            .map_err(|e| format!("credential_process {program:?} failed: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "credential_process {program:?} exited with {}",
                out.status
            ));
        }
        if out.stdout.len() > MAX_ANSWER {
            return Err(format!(
                "credential_process {program:?} printed more than 64 KiB"
            ));
        }
        parse_answer(&out.stdout).map_err(|why| format!("credential_process {program:?}: {why}"))
    }
}

/// The JSON a credential process prints (Version 1).
fn parse_answer(stdout: &[u8]) -> Result<(AwsCredential, Option<SystemTime>), String> {
    let v: serde_json::Value =
        deltalens_json::from_slice(stdout).map_err(|e| format!("its answer is not JSON ({e})"))?;
    if v.get("Version").and_then(|x| x.as_i64()) != Some(1) {
        return Err("its answer is not Version 1".into());
    }
    let text = |k: &str| v.get(k).and_then(|x| x.as_str()).filter(|s| !s.is_empty());
    let key_id = text("AccessKeyId").ok_or("no AccessKeyId")?.to_string();
    let secret_key = text("SecretAccessKey")
        .ok_or("no SecretAccessKey")?
        .to_string();
    let expires = match text("Expiration") {
        None => None,
        Some(t) => Some(
            chrono::DateTime::parse_from_rfc3339(t)
                .map_err(|e| format!("Expiration {t:?} is not RFC 3339 ({e})"))?
                .into(),
        ),
    };
    Ok((
        AwsCredential {
            key_id,
            secret_key,
            token: text("SessionToken").map(str::to_string),
        },
        expires,
    ))
}

/// Words of a command line: whitespace-separated, with '…' and "…" quoting and `\`
/// escapes (outside single quotes); `None` for an unclosed quote.
fn split_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[async_trait::async_trait]
impl CredentialProvider for ProcessCredentials {
    type Credential = AwsCredential;
    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        let mut cur = self.current.lock().await;
        let fresh = cur
            .as_ref()
            .is_some_and(|(_, exp)| exp.is_none_or(|e| SystemTime::now() + MARGIN < e));
        if !fresh {
            let (c, exp) = self
                .run()
                .await
                .map_err(|e| object_store::Error::Unauthenticated {
                    path: String::new(),
                    source: e.into(),
                })?;
            *cur = Some((Arc::new(c), exp));
        }
        match cur.as_ref() {
            Some((c, _)) => Ok(Arc::clone(c)),
            None => Err(object_store::Error::Unauthenticated {
                path: String::new(),
                source: "no credentials".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_from_both_files() {
        let dir = std::env::temp_dir().join(format!("deltalens-aws-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config"),
            "[default]\nregion = eu-west-1\n[profile dev]\nregion = us-west-2\ncredential_process = /bin/echo \"a b\" 'c d'\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("credentials"),
            "[default]\naws_access_key_id = AK\naws_secret_access_key = SK\n# comment\n[dev]\n",
        )
        .unwrap();
        let d = dir.clone();
        let env = move |profile: Option<&'static str>| {
            let d = d.clone();
            move |k: &str| match k {
                "AWS_CONFIG_FILE" => Some(d.join("config").display().to_string()),
                "AWS_SHARED_CREDENTIALS_FILE" => Some(d.join("credentials").display().to_string()),
                "AWS_PROFILE" => profile.map(str::to_string),
                _ => None,
            }
        };
        let p = load(&env(None)).unwrap();
        assert!(
            p.options
                .contains(&("aws_access_key_id".into(), "AK".into()))
        );
        assert!(
            p.options
                .contains(&("aws_region".into(), "eu-west-1".into()))
        );
        assert_eq!(p.process, None);
        let p = load(&env(Some("dev"))).unwrap();
        assert_eq!(
            p.options,
            vec![("aws_region".to_string(), "us-west-2".to_string())]
        );
        assert_eq!(
            split_words(p.process.as_deref().unwrap()).unwrap(),
            ["/bin/echo", "a b", "c d"]
        );
        assert!(load(&env(Some("none"))).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn credential_process_answers() {
        let (c, exp) = parse_answer(
            br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"SK","SessionToken":"T","Expiration":"2030-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        assert_eq!((c.key_id.as_str(), c.token.as_deref()), ("AK", Some("T")));
        assert!(exp.is_some());
        for bad in [
            &br#"{"Version":2,"AccessKeyId":"AK","SecretAccessKey":"SK"}"#[..],
            br#"{"Version":1,"SecretAccessKey":"SK"}"#,
            br#"{"Version":1,"AccessKeyId":"AK","SecretAccessKey":"SK","Expiration":"soon"}"#,
            b"not json",
        ] {
            assert!(parse_answer(bad).is_err());
        }
        assert_eq!(split_words("a 'b"), None);
        assert_eq!(split_words(r"a\ b c"), Some(vec!["a b".into(), "c".into()]));
    }

    #[tokio::test]
    async fn a_process_is_run_once_while_its_credentials_are_fresh() {
        let dir = std::env::temp_dir().join(format!("deltalens-proc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let count = dir.join("count");
        let script = dir.join("creds.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho x >> '{}'\necho '{{\"Version\":1,\"AccessKeyId\":\"AK\",\"SecretAccessKey\":\"SK\",\"Expiration\":\"2099-01-01T00:00:00Z\"}}'\n",
                count.display()
            ),
        )
        .unwrap();
        let p = ProcessCredentials::new(format!("sh {}", script.display()));
        for _ in 0..3 {
            assert_eq!(p.get_credential().await.unwrap().key_id, "AK");
        }
        assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);
        let failing = ProcessCredentials::new("sh -c 'exit 3'".into());
        assert!(
            failing
                .get_credential()
                .await
                .unwrap_err()
                .to_string()
                .contains("exited")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
