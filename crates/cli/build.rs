//! Embed the built explorer (`dist/`, from `scripts/build-explorer` or `trunk build`) and the bundled demo
//! table (`tests/fixtures/demo`) into the `deltalens` binary, for `deltalens serve`.
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

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../..");
    let dist = std::env::var_os("DELTALENS_WEB_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("dist"));
    let demo = root.join("tests/fixtures/demo");
    println!("cargo:rerun-if-env-changed=DELTALENS_WEB_DIST");
    println!("cargo:rerun-if-changed={}", dist.display());
    println!(
        "cargo:rerun-if-changed={}",
        dist.join("index.html").display()
    );
    println!("cargo:rerun-if-changed={}", demo.display());
    let mut code = table("APP", &dist);
    code.push_str(&table("DEMO", &demo));
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("embedded.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
