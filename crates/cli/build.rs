//! Embed the built explorer (`dist/`, from `scripts/build-explorer` or `trunk build`) and the bundled demo
//! table (`tests/fixtures/demo`) into the `deltalens` binary, for `deltalens serve`; in a
//! packaged crate, the copies `scripts/package-cli` put in `embed/`.
//! A missing `dist/` embeds nothing: `serve` then explains how to build the app.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn files(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            files(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push((rel.to_string_lossy().replace('\\', "/"), p.clone()));
        }
    }
}

fn table(name: &str, root: &Path) -> String {
    let mut list = Vec::new();
    files(root, root, &mut list);
    let mut s = format!("pub static {name}: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in list {
        let _ = writeln!(
            s,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    s.push_str("];\n");
    s
}

/// `DELTALENS_COMMIT`: the commit built (`git rev-parse --short=12 HEAD`, with `-dirty`
/// when tracked files have changes), or `unknown` outside a git checkout (a packaged crate).
fn commit(root: &Path) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let id = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let id = if dirty && id != "unknown" {
        format!("{id}-dirty")
    } else {
        id
    };
    println!("cargo:rustc-env=DELTALENS_COMMIT={id}");
    // a new commit (HEAD moves, or the branch it names)
    let head = root.join(".git/HEAD");
    println!("cargo:rerun-if-changed={}", head.display());
    if let Some(r) = std::fs::read_to_string(&head)
        .ok()
        .and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_string()))
    {
        println!(
            "cargo:rerun-if-changed={}",
            root.join(".git").join(r).display()
        );
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../..");
    // inside the crate when it was packaged (scripts/package-cli copies both into embed/,
    // which `cargo package` includes); else the repository's, where they are made
    let embed = manifest.join("embed");
    let inside = embed.join("dist").join("index.html").is_file();
    let dist = std::env::var_os("DELTALENS_WEB_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            if inside {
                embed.join("dist")
            } else {
                root.join("dist")
            }
        });
    let demo = if embed.join("demo").join("_delta_log").is_dir() {
        embed.join("demo")
    } else {
        root.join("tests/fixtures/demo")
    };
    println!("cargo:rerun-if-changed={}", embed.display());
    println!("cargo:rerun-if-env-changed=DELTALENS_WEB_DIST");
    println!("cargo:rerun-if-changed={}", dist.display());
    println!(
        "cargo:rerun-if-changed={}",
        dist.join("index.html").display()
    );
    println!("cargo:rerun-if-changed={}", demo.display());
    commit(&root);
    let mut code = table("APP", &dist);
    code.push_str(&table("DEMO", &demo));
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("embedded.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
