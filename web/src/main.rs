//! The explorer's entry point (built by trunk; see `index.html`).

fn main() {
    deltalens_web::start();
}
