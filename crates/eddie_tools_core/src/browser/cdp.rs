//! The Chrome DevTools Protocol over one websocket: commands with ids and their answers,
//! events (with the flattened session they belong to) handed to one consumer. Everything runs
//! on the browser runtime ([`super::session::rt`]); callers on any runtime talk to it through
//! channels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::error::{ErrorCode, Result, ToolError};

/// How long one command may take unless the caller says otherwise.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// An event from the browser.
#[derive(Debug)]
pub struct Event {
    /// The flattened session it came from (`None`: the browser target).
    pub session: Option<String>,
    /// `Domain.event`.
    pub method: String,
    /// Its parameters.
    pub params: Value,
}

/// Why a command got no result.
#[derive(Debug)]
enum Failure {
    /// The browser answered with an error (its message).
    Refused(String),
    /// The connection closed first.
    Closed,
    /// The answer came but is not JSON we can read (why).
    Unreadable(String),
}

/// An answer: its `result` parsed, or the whole frame for a command that reads it itself
/// ([`Conn::call_frame`]).
enum Reply {
    Value(Value),
    Frame(Utf8Bytes),
}

/// A command waiting for its answer; `raw`: it takes the frame as it came.
struct Waiter {
    raw: bool,
    tx: oneshot::Sender<std::result::Result<Reply, Failure>>,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter").field("raw", &self.raw).finish()
    }
}

type Pending = Arc<Mutex<HashMap<u64, Waiter>>>;

/// One connection.
#[derive(Debug)]
pub struct Conn {
    out: mpsc::UnboundedSender<String>,
    next: AtomicU64,
    pending: Pending,
    closed: Arc<AtomicBool>,
}

/// The browser went away.
pub fn gone(why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::BrowserNotFound,
        format!("the browser connection is gone ({why}); the next call starts or attaches again"),
    )
}

impl Conn {
    /// Connect to `ws_url`; events go to the returned receiver.
    pub async fn connect(ws_url: &str) -> Result<(Arc<Conn>, mpsc::UnboundedReceiver<Event>)> {
        let cfg = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(512 << 20))
            .max_frame_size(Some(512 << 20));
        let (ws, _) =
            tokio_tungstenite::connect_async_with_config(ws_url, Some(cfg), true).await.map_err(|e| {
                ToolError::new(
                    ErrorCode::BrowserNotFound,
                    format!("cannot connect to the browser at {ws_url}: {e}"),
                )
            })?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<String>();
        let (ev_tx, ev_rx) = mpsc::unbounded_channel::<Event>();
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        let closed = Arc::new(AtomicBool::new(false));
        tokio::spawn(async move {
            while let Some(text) = out_rx.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        let (p, c) = (Arc::clone(&pending), Arc::clone(&closed));
        tokio::spawn(async move {
            while let Some(msg) = stream.next().await {
                // Parsed from the frame itself (no copy of its text, unless a lone surrogate
                // escape has to be mended first); the frame is freed before the answer goes on.
                let t = match msg {
                    Ok(Message::Text(t)) => t,
                    Ok(Message::Binary(b)) => Utf8Bytes::from(String::from_utf8_lossy(&b).into_owned()),
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => continue,
                };
                // A command that reads its answer itself gets the frame as it came (no copy).
                if let Some(w) = take_raw(&p, &t) {
                    let _ = w.tx.send(Ok(Reply::Frame(t)));
                    continue;
                }
                let parsed = read_frame(&t);
                drop(t);
                let mut v = match parsed {
                    Ok(v) => v,
                    // An answer we cannot read fails its command at once (it would otherwise
                    // wait for its timeout); an unreadable event is dropped.
                    Err((id, why)) => {
                        let w = id.and_then(|id| p.lock().ok().and_then(|mut m| m.remove(&id)));
                        if let Some(w) = w {
                            let _ = w.tx.send(Err(Failure::Unreadable(why)));
                        }
                        continue;
                    }
                };
                if let Some(id) = v.get("id").and_then(Value::as_u64) {
                    let answer = match v.get_mut("error") {
                        Some(e) => Err(Failure::Refused(
                            e.get("message").and_then(Value::as_str).unwrap_or("error").to_owned(),
                        )),
                        None => Ok(Reply::Value(v.get_mut("result").map(Value::take).unwrap_or(Value::Null))),
                    };
                    let w = p.lock().ok().and_then(|mut m| m.remove(&id));
                    if let Some(w) = w {
                        let _ = w.tx.send(answer);
                    }
                } else if let Some(method) = v.get("method").and_then(Value::as_str) {
                    let ev = Event {
                        method: method.to_owned(),
                        session: v.get("sessionId").and_then(Value::as_str).map(str::to_owned),
                        params: v.get_mut("params").map(Value::take).unwrap_or(Value::Null),
                    };
                    let _ = ev_tx.send(ev);
                }
            }
            c.store(true, Ordering::SeqCst);
            // Every waiting command learns that the browser is gone.
            if let Ok(mut m) = p.lock() {
                for (_, w) in m.drain() {
                    let _ = w.tx.send(Err(Failure::Closed));
                }
            }
        });
        Ok((Arc::new(Conn { out, next: AtomicU64::new(1), pending, closed }), ev_rx))
    }

    /// Whether the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Send `method` (to `session`, or the browser) and wait for its result.
    pub async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        self.call_within(session, method, params, COMMAND_TIMEOUT).await
    }

    /// [`Conn::call`] with a time limit (`TIMEOUT` when it passes).
    pub async fn call_within(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value> {
        match self.request(session, method, params, limit, false).await? {
            Reply::Value(v) => Ok(v),
            Reply::Frame(_) => Err(ToolError::internal(format!("the answer to {method} came as a frame"))),
        }
    }

    /// Send `method` and wait for its answer's whole frame, unparsed (within
    /// [`COMMAND_TIMEOUT`]): for answers too large to hold as a `Value` tree, read with
    /// [`read_result`].
    pub async fn call_frame(&self, session: Option<&str>, method: &str, params: Value) -> Result<Utf8Bytes> {
        match self.request(session, method, params, COMMAND_TIMEOUT, true).await? {
            Reply::Frame(f) => Ok(f),
            Reply::Value(_) => Err(ToolError::internal(format!("the answer to {method} came parsed"))),
        }
    }

    async fn request(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        limit: Duration,
        raw: bool,
    ) -> Result<Reply> {
        if self.is_closed() {
            return Err(gone("closed"));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_owned());
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut m) = self.pending.lock() {
            m.insert(id, Waiter { raw, tx });
        }
        let forget = || {
            if let Ok(mut m) = self.pending.lock() {
                m.remove(&id);
            }
        };
        if self.out.send(msg.to_string()).is_err() {
            forget();
            return Err(gone("closed"));
        }
        match tokio::time::timeout(limit, rx).await {
            Err(_) => {
                forget();
                Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!("the browser did not answer {method} within {} ms", limit.as_millis()),
                ))
            }
            Ok(Err(_)) => Err(gone("closed")),
            Ok(Ok(Err(f))) => Err(failed(method, f)),
            Ok(Ok(Ok(v))) => Ok(v),
        }
    }

    /// Send without waiting for the answer (event handlers: `Fetch.continueRequest`).
    pub fn send(&self, session: Option<&str>, method: &str, params: Value) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_owned());
        }
        let _ = self.out.send(msg.to_string());
    }
}

/// The error of a command that failed.
fn failed(method: &str, f: Failure) -> ToolError {
    match f {
        Failure::Closed => gone("the connection closed"),
        Failure::Unreadable(why) => ToolError::new(
            ErrorCode::Parse,
            format!("the browser's answer to {method} is not JSON that can be read ({why})"),
        ),
        Failure::Refused(e) => {
            ToolError::new(ErrorCode::InvalidArgument, format!("the browser refused {method}: {e}"))
                .with_prop("cdpError", e)
        }
    }
}

/// The waiter of frame `t` when it takes its frame unparsed (only looked for while one
/// waits).
fn take_raw(p: &Pending, t: &str) -> Option<Waiter> {
    if !p.lock().ok()?.values().any(|w| w.raw) {
        return None;
    }
    let id = frame_id(t)?;
    let mut m = p.lock().ok()?;
    if m.get(&id)?.raw { m.remove(&id) } else { None }
}

/// The `result` of an answer `frame` (from [`Conn::call_frame`] for `method`), read with
/// `seed` straight from the frame's text (everything else skipped unread); an `error` answer
/// is the browser's refusal, as [`Conn::call`] gives it.
pub fn read_result<'de, S: DeserializeSeed<'de>>(frame: &'de str, method: &str, seed: S) -> Result<S::Value> {
    let mut de = serde_json::Deserializer::from_str(frame);
    let answer = serde::Deserializer::deserialize_map(&mut de, Envelope(Some(seed)))
        .and_then(|a| de.end().map(|()| a));
    match answer {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(f)) => Err(failed(method, f)),
        Err(e) => Err(failed(method, Failure::Unreadable(e.to_string()))),
    }
}

/// [`read_result`] into `T`, with lone surrogate escapes read as U+FFFD (as the reader of answers reads a frame).
pub fn read_result_as<T: serde::de::DeserializeOwned>(frame: &str, method: &str) -> Result<T> {
    match read_result(frame, method, std::marker::PhantomData::<T>) {
        Err(e) if e.code() == ErrorCode::Parse => match mend_lone_surrogates(frame) {
            Some(mended) => read_result(&mended, method, std::marker::PhantomData::<T>),
            None => Err(e),
        },
        r => r,
    }
}

/// An answer frame: `{id, result | error, sessionId}`.
struct Envelope<S>(Option<S>);

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for Envelope<S> {
    type Value = std::result::Result<S::Value, Failure>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an answer of the browser")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        #[derive(serde::Deserialize)]
        struct Refusal {
            message: Option<String>,
        }
        let mut out = None;
        while let Some(key) = map.next_key::<String>()? {
            match (key.as_str(), self.0.take()) {
                ("result", Some(seed)) => out = Some(Ok(map.next_value_seed(seed)?)),
                ("error", seed) => {
                    self.0 = seed;
                    let r: Refusal = map.next_value()?;
                    out = Some(Err(Failure::Refused(r.message.unwrap_or_else(|| "error".into()))));
                }
                (_, seed) => {
                    self.0 = seed;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out.unwrap_or_else(|| Err(Failure::Unreadable("the answer has no result".into()))))
    }
}

/// One CDP frame as JSON. Chromium writes a lone surrogate of a page's string (one a script
/// made: an attribute, a value, a title, a console message) as a lone `\ud800` escape, which
/// is not JSON for serde; such escapes become U+FFFD (on that path only: a frame without one is
/// parsed once, in place). A frame that still cannot be read gives the id it answers, when it
/// can be found, and why.
fn read_frame(t: &str) -> std::result::Result<Value, (Option<u64>, String)> {
    let err = match serde_json::from_str::<Value>(t) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    if let Some(mended) = mend_lone_surrogates(t)
        && let Ok(v) = serde_json::from_str::<Value>(&mended)
    {
        return Ok(v);
    }
    Err((frame_id(t), err.to_string()))
}

/// The `id` of a frame: the number after a leading `{"id":`, as Chromium writes its answers
/// (nothing else read), or else the frame's `id` field (everything else skipped unread).
fn frame_id(t: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<u64>,
    }
    let lead = || {
        let rest = t.trim_start().strip_prefix('{')?.trim_start().strip_prefix("\"id\"")?;
        let rest = rest.trim_start().strip_prefix(':')?.trim_start();
        let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        rest[..end].parse().ok()
    };
    lead().or_else(|| match serde_json::from_str::<Head>(t) {
        Ok(Head { id }) => id,
        Err(_) => None,
    })
}

/// `t` with every `\uXXXX` escape of a lone surrogate (a high one not followed by a low one's
/// escape, or a low one alone) replaced by `\ufffd`; `None` when it has none. Escapes are read
/// from each backslash on, so an escaped backslash followed by `ud800` is left alone.
pub(crate) fn mend_lone_surrogates(t: &str) -> Option<String> {
    let b = t.as_bytes();
    let hex4 = |at: usize| -> Option<u32> {
        let h = b.get(at..at + 4)?;
        if !h.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let is_low = |c: u32| (0xDC00..0xE000).contains(&c);
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(c) = (b.get(i + 1) == Some(&b'u')).then(|| hex4(i + 2)).flatten() else {
            i += 2;
            continue;
        };
        let lone = if (0xD800..0xDC00).contains(&c) {
            !(b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') && hex4(i + 8).is_some_and(is_low))
        } else {
            is_low(c)
        };
        if !lone {
            // A pair is kept whole (both escapes); anything else is one escape.
            i += if (0xD800..0xDC00).contains(&c) { 12 } else { 6 };
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(t.len()));
        o.push_str(&t[copied..i]);
        o.push_str("\\ufffd");
        i += 6;
        copied = i;
    }
    let mut o = out?;
    o.push_str(&t[copied..]);
    Some(o)
}

/// The CDP error text of `e`, when it is one.
pub fn cdp_error(e: &ToolError) -> Option<String> {
    e.props().get("cdpError").and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lone surrogate escapes (as Chromium writes a page's lone surrogates) read as U+FFFD;
    /// pairs, escaped backslashes and everything else read as they are.
    #[test]
    fn lone_surrogate_escapes_read_as_replacement_characters() {
        let cases = [
            (r#"{"a":"x\ud800y"}"#, "x\u{FFFD}y"),
            (r#"{"a":"\udc00"}"#, "\u{FFFD}"),
            (r#"{"a":"\uD83D\uDE00 \ud800"}"#, "\u{1F600} \u{FFFD}"),
            (r#"{"a":"\ud800\ud800\udc00"}"#, "\u{FFFD}\u{10000}"),
            (r#"{"a":"\udc00\ud800"}"#, "\u{FFFD}\u{FFFD}"),
            (r#"{"a":"\\\ud800\\"}"#, "\\\u{FFFD}\\"),
            (r#"{"a":"end\ud83d"}"#, "end\u{FFFD}"),
            (r#"{"a":"\ud83d\u0041"}"#, "\u{FFFD}A"),
            ("{\"a\":\"é\\ud800 \\n\\\"\"}", "é\u{FFFD} \n\""),
        ];
        for (frame, want) in cases {
            assert!(serde_json::from_str::<Value>(frame).is_err(), "{frame}");
            let v = read_frame(frame).unwrap_or_else(|e| panic!("{frame}: {e:?}"));
            assert_eq!(v["a"], want, "{frame}");
        }
        for fine in [r#"{"a":"\\ud800"}"#, r#"{"a":"\uD83D\uDE00 é"}"#, r#"{"a":"x"}"#, "{\"a\":\"\\\\\"}"] {
            assert_eq!(mend_lone_surrogates(fine), None, "{fine}");
            assert_eq!(read_frame(fine).ok(), serde_json::from_str::<Value>(fine).ok(), "{fine}");
        }
        assert_eq!(read_frame(r#"{"a":"\\ud800"}"#).unwrap()["a"], "\\ud800");
        // Not JSON at all: the id it answers, when it can be found.
        assert_eq!(read_frame(r#"{"id":7,"result":{"a":"x"}} junk"#).err().map(|e| e.0), Some(Some(7)));
        assert_eq!(read_frame(r#"{"id": 8, "result": {"a": "\ud800"#).err().map(|e| e.0), Some(Some(8)));
        assert_eq!(read_frame(r#"{"method":"X","params":{"#).err().map(|e| e.0), Some(None));
    }

    /// An answer read from its frame: the result by the seed, a refusal as `call` gives it, and
    /// a frame that is not an answer as `PARSE`; lone surrogates read as U+FFFD when asked.
    #[test]
    fn read_result_reads_answers_from_their_frames() {
        let frame = r#"{"id":3,"result":{"a":[1,2],"b":"x"},"sessionId":"S"}"#;
        let v: Value = read_result(frame, "M.m", std::marker::PhantomData::<Value>).unwrap();
        assert_eq!(v, json!({"a": [1, 2], "b": "x"}));
        let e = read_result_as::<Value>(r#"{"id":3,"error":{"code":-32000,"message":"nope"}}"#, "M.m")
            .unwrap_err();
        assert_eq!((e.code(), cdp_error(&e).as_deref()), (ErrorCode::InvalidArgument, Some("nope")));
        for bad in [r#"{"id":3}"#, r#"{"id":3,"result":{}"#, "[1]", r#"{"id":3,"result":{"a":"\ud800"}}"#] {
            let e = read_result(bad, "M.m", std::marker::PhantomData::<Value>).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Parse, "{bad}");
            assert!(e.to_string().contains("M.m"), "{e}");
        }
        let v: Value = read_result_as(r#"{"id":3,"result":{"a":"\ud800"}}"#, "M.m").unwrap();
        assert_eq!(v["a"], "\u{FFFD}");
    }

    /// A browser (a websocket server on loopback) that answers with a lone surrogate, then with
    /// text that is not JSON, then well: the first reads as U+FFFD, the second fails its
    /// command at once with `PARSE` (not after its time limit), the third answers.
    #[test]
    fn an_unreadable_answer_fails_its_command_at_once() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tokio::spawn(async move {
                let (sock, _) = listener.accept().await.unwrap();
                let mut ws = tokio_tungstenite::accept_async(sock).await.unwrap();
                let answers = [
                    r#"{"id":ID,"result":{"title":"t\ud800"}}"#,
                    r#"{"id":ID,"result":{"title":"t\ud800"}"#,
                    r#"{"id":ID,"result":{"title":"ok"}}"#,
                    r#"{"id":ID,"result":{"title":"ok"}}"#,
                ];
                for a in answers {
                    let Some(Ok(Message::Text(cmd))) = ws.next().await else { return };
                    let cmd: Value = serde_json::from_str(&cmd).unwrap();
                    // An event nobody can read comes first: it is dropped.
                    ws.send(Message::text(r#"{"method":"X.y","params":{"#)).await.unwrap();
                    ws.send(Message::text(a.replace("ID", &cmd["id"].to_string()))).await.unwrap();
                }
                let _ = ws.next().await;
            });
            let (conn, _events) = Conn::connect(&format!("ws://{addr}/")).await.unwrap();
            let limit = Duration::from_secs(20);
            let v = conn.call_within(None, "A.a", json!({}), limit).await.unwrap();
            assert_eq!(v["title"], "t\u{FFFD}");
            let t = std::time::Instant::now();
            let e = conn.call_within(None, "B.b", json!({}), limit).await.unwrap_err();
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
            assert_eq!(e.code(), ErrorCode::Parse, "{e}");
            assert!(e.to_string().contains("B.b"), "{e}");
            // The same answer taken as its frame, unparsed, while a parsed one waits.
            let (raw, v) = tokio::join!(
                conn.call_frame(None, "C.c", json!({})),
                conn.call_within(None, "D.d", json!({}), limit)
            );
            let raw = raw.unwrap();
            assert!(
                raw.as_str().starts_with(r#"{"id":"#) && raw.as_str().contains(r#""title":"ok""#),
                "{}",
                raw.as_str()
            );
            assert_eq!(v.unwrap()["title"], "ok");
            server.abort();
        });
    }
}
