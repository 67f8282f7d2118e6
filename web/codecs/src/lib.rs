//! The explorer's codec module, fetched the first time a Parquet page needs it and never
//! on the first load: the decoders of brotli and zstd (the main module is built without
//! them, vendor/parquet patch 12). Spark and delta-rs write snappy by default, but
//! delta-rs' rewrites (OPTIMIZE, MERGE) and Databricks often write zstd.
//!
//! [`decompress`] is plain Rust (tested natively); the `#[wasm_bindgen]` export wraps it
//! for the page's JavaScript (`web/src/extras.rs` calls it).

use std::io::Read;

/// The most a page of unknown size may decode to: the page limit the reader applies to a
/// size it knows (`MAX_PAGE_BYTES`, 256 MiB).
pub const MAX_UNKNOWN_PAGE_BYTES: u64 = 256 << 20;
/// The brotli decoder's buffer: at most 1 MiB whatever a page claims (as in the reader).
const BROTLI_BUFFER: usize = 1 << 20;

/// Decode a page compressed with `codec` (`brotli` or `zstd`) that should hold `size`
/// bytes (`None`: unknown). At most one byte past `size` is decoded (a decompression bomb
/// stops there and the reader finds the size wrong); memory grows with what is decoded,
/// not with what the page claims.
pub fn decompress(codec: &str, input: &[u8], size: Option<u64>) -> Result<Vec<u8>, String> {
    let limit = size.map_or(MAX_UNKNOWN_PAGE_BYTES, |n| n.saturating_add(1));
    let mut out = Vec::new();
    let read = match codec {
        "brotli" => {
            let buffer = usize::try_from(size.unwrap_or(4096))
                .unwrap_or(BROTLI_BUFFER)
                .clamp(1, BROTLI_BUFFER);
            brotli_decompressor::Decompressor::new(input, buffer)
                .take(limit)
                .read_to_end(&mut out)
        }
        "zstd" => zstd::stream::read::Decoder::with_buffer(input)
            .and_then(|d| d.take(limit).read_to_end(&mut out)),
        other => return Err(format!("the codec module does not decode {other} pages")),
    };
    read.map_err(|e| format!("{codec} page: {e}"))?;
    Ok(out)
}

#[cfg(target_arch = "wasm32")]
mod exports {
    use wasm_bindgen::prelude::*;

    /// `decompress` for JavaScript: `size` < 0 when unknown; errors are `Error`s.
    #[wasm_bindgen(js_name = decompress)]
    pub fn js_decompress(codec: &str, input: &[u8], size: f64) -> Result<Vec<u8>, JsError> {
        let size = (size >= 0.0).then_some(size as u64);
        super::decompress(codec, input, size).map_err(|e| JsError::new(&e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests may
    use super::*;
    use std::io::Write;

    fn text(n: usize) -> Vec<u8> {
        (0..n).map(|i| b"delta lake "[i % 11]).collect()
    }

    fn brotli(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            w.write_all(data).unwrap();
        }
        out
    }

    #[test]
    fn pages_decode_to_their_size_and_no_further() {
        let page = text(100_000);
        for (codec, packed) in [
            ("brotli", brotli(&page)),
            ("zstd", zstd::bulk::compress(&page, 3).unwrap()),
        ] {
            assert_eq!(
                decompress(codec, &packed, Some(100_000)).unwrap(),
                page,
                "{codec}"
            );
            assert_eq!(decompress(codec, &packed, None).unwrap(), page, "{codec}");
            // a page claiming less stops one byte past its claim: the reader refuses it
            let short = decompress(codec, &packed, Some(10)).unwrap();
            assert_eq!(short.len(), 11, "{codec}");
            // a truncated page is an error or short (the reader finds the size wrong)
            match decompress(codec, &packed[..packed.len() / 2], Some(100_000)) {
                Ok(o) => assert!(o.len() < 100_000, "{codec}"),
                Err(e) => assert!(e.contains(codec), "{e}"),
            }
        }
        // a bomb: 64 MiB of zeros in a few KB decodes to the claim + 1, not 64 MiB
        let zeros = vec![0u8; 64 << 20];
        let bomb = zstd::bulk::compress(&zeros, 3).unwrap();
        assert!(bomb.len() < 64 << 10);
        assert_eq!(decompress("zstd", &bomb, Some(1000)).unwrap().len(), 1001);
        let e = decompress("lzo", b"x", Some(1)).unwrap_err();
        assert!(e.contains("lzo"), "{e}");
        assert!(decompress("brotli", b"\xff\xff\xff", Some(10)).is_err());
    }
}
