//! The explorer's entry point (built by scripts/build-explorer, or trunk for development; see `index.html`).

fn main() {
    deltalens_web::start();
}
