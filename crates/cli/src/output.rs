//! The one way anything a command prints reaches stdout — and an error stderr: an
//! [`Output`], made once in `main` from whether each stream is a terminal, decides per
//! stream what is escaped. Commands get `&Output` (or return a [`Doc`]) and never touch
//! stdout themselves (a test below holds them to it).
//!
//! | what                                   | piped or redirected | on a terminal                         |
//! |----------------------------------------|---------------------|---------------------------------------|
//! | text: documents, the aligned table     | escaped, visibly    | escaped, visibly                      |
//! | JSON, JSON lines                       | exact               | `\uXXXX` escapes: valid, same values  |
//! | CSV, TSV                               | exact               | escaped visibly (`\x1b`): not the data |
//! | Arrow, Parquet                         | exact               | refused (`--output FILE` or redirect) |
//! | `--output FILE`                        | exact               | exact                                 |
//!
//! "Escaped" means every character [`needs_escape`] names: C0/C1 controls but newline
//! and tab, DEL, bidi controls, line separators, zero-width characters. CSV and TSV have
//! no escape of their own, so on a terminal they are a view, not byte-exact: pipe or
//! `--output` them for the data.
//!
//! [`needs_escape`]: deltalens_present::text::needs_escape

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use deltalens_present::text::{Escape, TerminalWriter, json_terminal_safe, terminal_safe};
use deltalens_present::{Format, PresentError, RowWriter};

use crate::error::CliError;

/// What a command prints when it is done (what it streamed, it wrote through
/// [`Output`] already).
#[derive(Debug)]
pub enum Doc {
    /// Text for people: always shown escaped.
    Text(String),
    /// One JSON document: exact through a pipe, `\uXXXX`-escaped on a terminal.
    Json(String),
}

/// Where stdout and stderr go, and so what is escaped on them. Made once, in `main`.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    stdout_tty: bool,
    stderr_tty: bool,
}

/// What kind of document a stream to stdout carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text for people (an aligned table).
    Text,
    /// JSON.
    Json,
}

impl Output {
    /// The streams as they are: `stdout_tty`, `stderr_tty` say which are terminals.
    pub fn new(stdout_tty: bool, stderr_tty: bool) -> Output {
        Output {
            stdout_tty,
            stderr_tty,
        }
    }

    /// The process' own streams; `assume_tty` treats both as terminals (tests).
    pub fn of_process(assume_tty: bool) -> Output {
        Output::new(
            assume_tty || std::io::stdout().is_terminal(),
            assume_tty || std::io::stderr().is_terminal(),
        )
    }

    /// How stdout escapes a document of `format` (`None`: exact).
    fn escape_for(&self, format: Format) -> Option<Escape> {
        match format {
            Format::Table => Some(Escape::Visible),
            Format::Csv | Format::Tsv if self.stdout_tty => Some(Escape::Visible),
            Format::Json | Format::Jsonl if self.stdout_tty => Some(Escape::Json),
            _ => None,
        }
    }

    /// Refuses binary rows (Arrow, Parquet) for a terminal: they need `--output FILE`
    /// or a redirect. Commands call it before they open a table.
    pub fn check_rows(&self, format: Format, path: Option<&Path>) -> Result<(), CliError> {
        let binary = matches!(format, Format::Arrow | Format::Parquet);
        if binary && path.is_none() && self.stdout_tty {
            return Err(CliError::Argument {
                expected: "--output FILE or a redirect for binary rows (not a terminal)",
                given: format!("--format {}", format.name()),
            });
        }
        Ok(())
    }

    /// A writer of rows of `schema` in `format`, to `path` (exact) or stdout.
    pub fn rows(
        &self,
        format: Format,
        path: Option<&Path>,
        schema: &SchemaRef,
    ) -> Result<Rows, CliError> {
        self.check_rows(format, path)?;
        let sink = match path {
            Some(p) => {
                let file = std::fs::File::create(p).map_err(|source| CliError::CreateOutput {
                    path: p.to_path_buf(),
                    source,
                })?;
                Sink::exact(Box::new(std::io::BufWriter::new(file)))
            }
            None => self.stdout(self.escape_for(format)),
        };
        let sink = Arc::new(Mutex::new(sink));
        Ok(Rows {
            writer: RowWriter::new(format, Shared(sink.clone()), schema)?,
            sink,
        })
    }

    /// A document of `kind` written to stdout piece by piece.
    pub fn stream(&self, kind: Kind) -> Stream {
        let format = match kind {
            Kind::Text => Format::Table,
            Kind::Json => Format::Json,
        };
        Stream {
            sink: self.stdout(self.escape_for(format)),
        }
    }

    fn stdout(&self, escape: Option<Escape>) -> Sink {
        let out: Box<dyn Write + Send> = Box::new(std::io::BufWriter::new(std::io::stdout()));
        match escape {
            None => Sink::exact(out),
            Some(e) => Sink(Inner::Escaped(TerminalWriter::new(out, e))),
        }
    }

    /// Print a command's document on stdout.
    pub fn print(&self, doc: &Doc) -> std::io::Result<()> {
        let mut s = self.stream(match doc {
            Doc::Text(_) => Kind::Text,
            Doc::Json(_) => Kind::Json,
        });
        let (Doc::Text(text) | Doc::Json(text)) = doc;
        s.sink.write_all(text.as_bytes())?;
        s.sink.finish()
    }

    /// Whether stdout is a pipe whose reader has gone (`deltalens history T --follow |
    /// head -3`: the command ends once `head` does, not at its next write).
    pub fn stdout_reader_gone(&self) -> bool {
        stdout_closed()
    }

    /// An error as stderr shows it: `error: …` (escaped), or with `json` one JSON object
    /// `{"error": {"code", "message"}}`, exact through a pipe, `\uXXXX`-escaped on a
    /// terminal.
    pub fn error_text(&self, e: &CliError, json: bool) -> String {
        if json {
            let doc = serde_json::json!({"error": {"code": e.code(), "message": e.to_string()}})
                .to_string();
            if self.stderr_tty {
                json_terminal_safe(&doc).into_owned()
            } else {
                doc
            }
        } else {
            format!("error: {}", terminal_safe(&e.to_string(), true))
        }
    }
}

#[cfg(unix)]
fn stdout_closed() -> bool {
    use std::os::fd::AsRawFd;
    // POLLOUT asked for (some systems report nothing on a descriptor asked for no
    // event); only an error or a hang-up counts: a full pipe is not a closed one
    let mut fd = libc::pollfd {
        fd: std::io::stdout().as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call; a timeout of 0 never blocks.
    #[allow(unsafe_code)]
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    n > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

#[cfg(not(unix))]
fn stdout_closed() -> bool {
    false
}

enum Inner {
    Exact(Box<dyn Write + Send>),
    Escaped(TerminalWriter<Box<dyn Write + Send>>),
}

/// A destination made by [`Output`] only.
pub struct Sink(Inner);

impl Sink {
    fn exact(out: Box<dyn Write + Send>) -> Sink {
        Sink(Inner::Exact(out))
    }

    /// Write what is held back and flush.
    fn finish(self) -> std::io::Result<()> {
        match self.0 {
            Inner::Exact(mut w) => w.flush(),
            Inner::Escaped(w) => w.finish()?.flush(),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.0 {
            Inner::Exact(w) => w.write(buf),
            Inner::Escaped(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.0 {
            Inner::Exact(w) => w.flush(),
            Inner::Escaped(w) => w.flush(),
        }
    }
}

/// Rows on their way out: `write` each batch, then `finish`.
pub struct Rows {
    writer: RowWriter<Shared>,
    /// The destination the writer writes into, held here too so that what the writer has
    /// written can be flushed before the document ends (`changes --follow`).
    sink: Arc<Mutex<Sink>>,
}

impl Rows {
    /// Write `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), PresentError> {
        self.writer.write(batch)
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.writer.rows()
    }

    /// Send on what the format has written so far (rows a following command printed
    /// reach the reader now, not when the document ends; a Parquet file's row groups
    /// are written when it ends).
    pub fn flush(&mut self) -> Result<(), CliError> {
        Shared(self.sink.clone())
            .flush()
            .map_err(|e| CliError::Present(PresentError::Io(e)))
    }

    /// End the document and flush it.
    pub fn finish(self) -> Result<(), CliError> {
        let io = |e| CliError::Present(PresentError::Io(e));
        drop(self.writer.finish()?);
        match Arc::try_unwrap(self.sink) {
            Ok(sink) => sink
                .into_inner()
                .map_err(|_| io(poisoned()))?
                .finish()
                .map_err(io),
            // (the writer was the only other holder, and it is gone)
            Err(sink) => Shared(sink).flush().map_err(io),
        }
    }
}

/// A [`Sink`] shared by a [`RowWriter`] and the [`Rows`] that flushes it.
struct Shared(Arc<Mutex<Sink>>);

fn poisoned() -> std::io::Error {
    std::io::Error::other("the output failed in another thread")
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| poisoned())?.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().map_err(|_| poisoned())?.flush()
    }
}

/// A document written to stdout piece by piece (`files` as its list streams in).
pub struct Stream {
    sink: Sink,
}

impl Stream {
    /// Write `s`.
    pub fn write(&mut self, s: &str) -> Result<(), CliError> {
        self.sink
            .write_all(s.as_bytes())
            .map_err(|e| CliError::Present(PresentError::Io(e)))
    }

    /// Send on what was written so far.
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.sink
            .flush()
            .map_err(|e| CliError::Present(PresentError::Io(e)))
    }

    /// Flush the document.
    pub fn finish(self) -> Result<(), CliError> {
        self.sink
            .finish()
            .map_err(|e| CliError::Present(PresentError::Io(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No command writes to stdout but through [`Output`] (`serve`, which prints its
    /// addresses as it starts, aside).
    #[test]
    fn commands_reach_stdout_only_through_the_output() {
        let sources = [
            ("bench", include_str!("cmd/bench.rs")),
            ("catalog", include_str!("cmd/catalog.rs")),
            ("changes", include_str!("cmd/changes.rs")),
            ("diff", include_str!("cmd/diff.rs")),
            ("files", include_str!("cmd/files.rs")),
            ("health", include_str!("cmd/health.rs")),
            ("history", include_str!("cmd/history.rs")),
            ("info", include_str!("cmd/info.rs")),
            ("mod", include_str!("cmd/mod.rs")),
            ("plan", include_str!("cmd/plan.rs")),
            ("query", include_str!("cmd/query.rs")),
            ("scan", include_str!("cmd/scan.rs")),
            ("schema", include_str!("cmd/schema.rs")),
            ("sql", include_str!("cmd/sql.rs")),
            ("main", include_str!("main.rs")),
            ("args", include_str!("args.rs")),
            ("table", include_str!("table.rs")),
            ("follow", include_str!("follow.rs")),
        ];
        for (name, src) in sources {
            for bypass in [
                "stdout()",
                "println!",
                "print!(",
                "io::stdout",
                "is_terminal",
            ] {
                // (`eprintln!` is stderr's)
                let found = src
                    .match_indices(bypass)
                    .any(|(i, _)| !src[..i].ends_with('e'));
                assert!(!found, "{name}.rs: `{bypass}`");
            }
        }
    }

    #[test]
    fn binary_rows_are_refused_on_a_terminal_only() {
        let tty = Output::new(true, true);
        let pipe = Output::new(false, false);
        assert!(tty.check_rows(Format::Parquet, None).is_err());
        assert!(tty.check_rows(Format::Arrow, None).is_err());
        assert!(
            tty.check_rows(Format::Parquet, Some(Path::new("x")))
                .is_ok()
        );
        assert!(tty.check_rows(Format::Csv, None).is_ok());
        assert!(pipe.check_rows(Format::Parquet, None).is_ok());
    }

    #[test]
    fn json_errors_stay_json_on_a_terminal() {
        let e = CliError::SplitFile {
            path: "split.json".into(),
            message: "x\u{1b}]52;c;eA==\u{7}\u{202e}".into(),
        };
        for out in [Output::new(false, true), Output::new(false, false)] {
            let text = out.error_text(&e, true);
            let v: serde_json::Value = deltalens_json::from_str(&text).unwrap();
            assert!(v["error"]["message"].as_str().unwrap().contains("\u{202e}"));
            // serde_json escapes C0 itself; the bidi override only a terminal's JSON
            assert_eq!(out.stderr_tty, !text.contains('\u{202e}'), "{text}");
        }
        let text = Output::new(false, false).error_text(&e, false);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text}"
        );
    }
}
