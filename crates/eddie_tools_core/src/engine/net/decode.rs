//! `Content-Encoding`, undone layer by layer while the body streams. Every coding the header
//! lists (`gzip, gzip`, or two `Content-Encoding` lines) is decoded, last applied first, up to
//! [`MAX_LAYERS`]; the decoded bytes are counted at the innermost layer, so a body that
//! decodes past the caller's cap stops there (a zip bomb of any depth is `TOO_LARGE`, having
//! used at most the cap and the decoders' small windows). A coding this client does not know
//! (`compress`, `zstd`, a made-up one) leaves the body as served, as before.

use std::io::Write;
use std::sync::{Arc, Mutex};

use reqwest::header::{CONTENT_ENCODING, HeaderMap};

/// Most codings undone on one body; more is refused (`TOO_LARGE`).
pub const MAX_LAYERS: usize = 4;
/// The decoded-size limit when the caller set none.
pub const DEFAULT_LIMIT: usize = 1 << 30;
/// What `Accept-Encoding` says when the client decodes.
pub const ACCEPT: &str = "gzip, deflate, br";

/// One coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// `gzip` / `x-gzip` (several members are read as one stream, as browsers do).
    Gzip,
    /// `deflate` (the zlib format, RFC 9110).
    Deflate,
    /// `br`.
    Brotli,
}

/// What the headers ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Nothing to undo (no coding, `identity`, or one this client does not know).
    AsServed,
    /// These codings, in the order they were applied.
    Decode(Vec<Coding>),
    /// More codings than [`MAX_LAYERS`].
    TooDeep(usize),
}

/// Read the `Content-Encoding` lines of `headers`.
pub fn plan(headers: &HeaderMap) -> Plan {
    let mut codings = Vec::new();
    for v in headers.get_all(CONTENT_ENCODING) {
        let Ok(v) = v.to_str() else { return Plan::AsServed };
        for c in v.split(',').map(|c| c.trim().to_ascii_lowercase()) {
            match c.as_str() {
                "" | "identity" => {}
                "gzip" | "x-gzip" => codings.push(Coding::Gzip),
                "deflate" => codings.push(Coding::Deflate),
                "br" => codings.push(Coding::Brotli),
                _ => return Plan::AsServed,
            }
        }
    }
    match codings.len() {
        0 => Plan::AsServed,
        n if n > MAX_LAYERS => Plan::TooDeep(n),
        _ => Plan::Decode(codings),
    }
}

/// Why decoding stopped.
#[derive(Debug)]
pub enum DecodeError {
    /// The decoded body passed the limit.
    TooLarge,
    /// A layer is not valid data of its coding.
    Invalid(String),
}

/// The decoded bytes, counted against the limit.
#[derive(Debug, Default)]
struct Sink {
    buf: Vec<u8>,
    total: usize,
    limit: usize,
    over: bool,
    /// The whole body is kept here ([`Decoder::keep_all`]), not handed out piece by piece.
    keep: bool,
}

#[derive(Debug, Clone)]
struct SharedSink(Arc<Mutex<Sink>>);

impl SharedSink {
    fn lock(&self) -> std::sync::MutexGuard<'_, Sink> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Write for SharedSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let mut s = self.lock();
        if s.total.saturating_add(data.len()) > s.limit {
            s.over = true;
            return Err(std::io::Error::other("decoded body over the limit"));
        }
        s.total += data.len();
        // Grown by a quarter rather than doubling: kept whole, a doubled body is up to half
        // empty when it ends.
        if s.buf.len() + data.len() > s.buf.capacity() {
            let more = data.len().max(s.buf.capacity() / 4).min(s.limit.saturating_sub(s.buf.len()));
            s.buf.reserve_exact(more);
        }
        s.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A layer: a writer that decodes into the next one, and can be told the input ended.
trait Layer: Write + Send {
    fn finish(&mut self) -> std::io::Result<()>;
}

impl Layer for SharedSink {
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Layer for flate2::write::MultiGzDecoder<Box<dyn Layer>> {
    fn finish(&mut self) -> std::io::Result<()> {
        self.try_finish()?;
        self.get_mut().finish()
    }
}

impl Layer for flate2::write::ZlibDecoder<Box<dyn Layer>> {
    fn finish(&mut self) -> std::io::Result<()> {
        self.try_finish()?;
        self.get_mut().finish()
    }
}

impl Layer for brotli_decompressor::DecompressorWriter<Box<dyn Layer>> {
    fn finish(&mut self) -> std::io::Result<()> {
        self.close()?;
        self.get_mut().finish()
    }
}

/// A streaming decoder of a body's codings.
pub struct Decoder {
    outer: Box<dyn Layer>,
    sink: SharedSink,
    fed: bool,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder").field("fed", &self.fed).finish_non_exhaustive()
    }
}

impl Decoder {
    /// A decoder of `codings` (in the order they were applied) whose output stops at `limit`.
    pub fn new(codings: &[Coding], limit: usize) -> Self {
        let sink = SharedSink(Arc::new(Mutex::new(Sink { limit, ..Sink::default() })));
        let mut layer: Box<dyn Layer> = Box::new(sink.clone());
        // The first coding applied is undone last: it is the innermost layer.
        for c in codings {
            layer = match c {
                Coding::Gzip => Box::new(flate2::write::MultiGzDecoder::new(layer)),
                Coding::Deflate => Box::new(flate2::write::ZlibDecoder::new(layer)),
                Coding::Brotli => Box::new(brotli_decompressor::DecompressorWriter::new(layer, 32 << 10)),
            };
        }
        Self { outer: layer, sink, fed: false }
    }

    /// Change the limit on the decoded size (counting what was already decoded).
    pub fn set_limit(&mut self, limit: usize) {
        self.sink.lock().limit = limit;
    }

    fn fail(&self, e: &std::io::Error) -> DecodeError {
        if self.sink.lock().over { DecodeError::TooLarge } else { DecodeError::Invalid(e.to_string()) }
    }

    fn take(&self) -> Vec<u8> {
        let mut s = self.sink.lock();
        if s.keep { Vec::new() } else { std::mem::take(&mut s.buf) }
    }

    /// Keep the whole decoded body in one buffer (taken by [`Decoder::take_all`] once the body
    /// has ended) instead of handing out each piece: no piece is copied again.
    pub fn keep_all(&mut self) {
        self.sink.lock().keep = true;
    }

    /// Everything decoded and not yet handed out.
    pub fn take_all(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.sink.lock().buf)
    }

    /// Feed a piece of the body as served; what it decodes to so far.
    pub fn push(&mut self, data: &[u8]) -> Result<Vec<u8>, DecodeError> {
        if !data.is_empty() {
            self.fed = true;
        }
        if let Err(e) = self.outer.write_all(data) {
            return Err(self.fail(&e));
        }
        Ok(self.take())
    }

    /// The body ended: the rest of the decoded bytes.
    pub fn finish(&mut self) -> Result<Vec<u8>, DecodeError> {
        if self.fed
            && let Err(e) = self.outer.finish()
        {
            // A body cut short after its last full block is read as far as it goes (browsers
            // show a truncated page too); only the cap is an error here.
            let err = self.fail(&e);
            if matches!(err, DecodeError::TooLarge) {
                return Err(err);
            }
        }
        Ok(self.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn headers(lines: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for l in lines {
            h.append(CONTENT_ENCODING, HeaderValue::from_str(l).unwrap());
        }
        h
    }

    fn decode_all(
        codings: &[Coding],
        body: &[u8],
        limit: usize,
        piece: usize,
    ) -> Result<Vec<u8>, DecodeError> {
        let mut d = Decoder::new(codings, limit);
        let mut out = Vec::new();
        for c in body.chunks(piece.max(1)) {
            out.extend(d.push(c)?);
        }
        out.extend(d.finish()?);
        Ok(out)
    }

    #[test]
    fn every_layer_is_read_from_one_line_or_several() {
        use Coding::*;
        assert_eq!(plan(&headers(&[])), Plan::AsServed);
        assert_eq!(plan(&headers(&["identity"])), Plan::AsServed);
        assert_eq!(plan(&headers(&["gzip"])), Plan::Decode(vec![Gzip]));
        assert_eq!(plan(&headers(&["gzip, gzip"])), Plan::Decode(vec![Gzip, Gzip]));
        assert_eq!(plan(&headers(&["gzip", "gzip"])), Plan::Decode(vec![Gzip, Gzip]));
        assert_eq!(plan(&headers(&["deflate", " BR "])), Plan::Decode(vec![Deflate, Brotli]));
        assert_eq!(plan(&headers(&["gzip, zstd"])), Plan::AsServed);
        assert_eq!(plan(&headers(&["gzip,gzip,gzip,gzip,gzip"])), Plan::TooDeep(5));
    }

    #[test]
    fn stacked_codings_decode_to_the_original() {
        let text = b"hello, layered world\n".repeat(500);
        let twice = gzip(&gzip(&text));
        for piece in [1, 7, 4096, twice.len()] {
            assert_eq!(decode_all(&[Coding::Gzip, Coding::Gzip], &twice, 1 << 20, piece).unwrap(), text);
        }
        // deflate applied first, then gzip: undone gzip first.
        let mixed = gzip(&zlib(&text));
        assert_eq!(decode_all(&[Coding::Deflate, Coding::Gzip], &mixed, 1 << 20, 100).unwrap(), text);
        // Decoding one layer only (the old behaviour) leaves gzip bytes, not the text.
        assert_ne!(decode_all(&[Coding::Gzip], &twice, 1 << 20, 100).unwrap(), text);
    }

    #[test]
    fn a_two_layer_bomb_stops_at_the_limit() {
        // 256 MiB of zeros, gzipped twice, is a few KiB; decoding stops at 1 MiB.
        let mut inner = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..256 {
            inner.write_all(&zeros).unwrap();
        }
        let bomb = gzip(&inner.finish().unwrap());
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        let e = decode_all(&[Coding::Gzip, Coding::Gzip], &bomb, 1 << 20, 16 << 10).unwrap_err();
        assert!(matches!(e, DecodeError::TooLarge), "{e:?}");
    }

    #[test]
    fn invalid_data_is_an_error_not_a_panic() {
        let e = decode_all(&[Coding::Gzip], b"this is not gzip at all", 1 << 20, 4).unwrap_err();
        assert!(matches!(e, DecodeError::Invalid(_)), "{e:?}");
        let e = decode_all(&[Coding::Brotli], &[0xff; 64], 1 << 20, 4).unwrap_err();
        assert!(matches!(e, DecodeError::Invalid(_)), "{e:?}");
    }

    #[test]
    fn a_body_kept_whole_is_decoded_into_one_buffer_never_past_the_limit() {
        let data = b"a line of a page, decoded\n".repeat(12_000);
        let gz = gzip(&data);
        let mut d = Decoder::new(&[Coding::Gzip], data.len());
        d.keep_all();
        for piece in gz.chunks(1000) {
            assert!(d.push(piece).unwrap().is_empty(), "nothing is handed out piece by piece");
        }
        assert!(d.finish().unwrap().is_empty());
        let all = d.take_all();
        assert_eq!(all, data);
        // Grown by a quarter at most, and never past the limit (here the body's size).
        assert!(all.capacity() <= data.len(), "{} for {}", all.capacity(), data.len());
        // One byte under the body: too large, as when it is handed out.
        let mut d = Decoder::new(&[Coding::Gzip], data.len() - 1);
        d.keep_all();
        let e = gz.chunks(1000).map(|p| d.push(p)).find_map(Result::err).or_else(|| d.finish().err());
        assert!(matches!(e, Some(DecodeError::TooLarge)), "{e:?}");
    }
}
