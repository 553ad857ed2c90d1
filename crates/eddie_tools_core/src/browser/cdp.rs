//! The Chrome DevTools Protocol over one websocket: commands with ids and their answers,
//! events (with the flattened session they belong to) handed to one consumer. Everything runs
//! on the browser runtime ([`super::session::rt`]); callers on any runtime talk to it through
//! channels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

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

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<std::result::Result<Value, String>>>>>;

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
                // Parsed from the frame itself (no copy of its text); the frame is freed
                // before the answer goes on.
                let parsed = match msg {
                    Ok(Message::Text(t)) => serde_json::from_str::<Value>(&t),
                    Ok(Message::Binary(b)) => serde_json::from_str::<Value>(&String::from_utf8_lossy(&b)),
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => continue,
                };
                let Ok(mut v) = parsed else { continue };
                if let Some(id) = v.get("id").and_then(Value::as_u64) {
                    let answer = match v.get_mut("error") {
                        Some(e) => {
                            Err(e.get("message").and_then(Value::as_str).unwrap_or("error").to_owned())
                        }
                        None => Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
                    };
                    let tx = p.lock().ok().and_then(|mut m| m.remove(&id));
                    if let Some(tx) = tx {
                        let _ = tx.send(answer);
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
                for (_, tx) in m.drain() {
                    let _ = tx.send(Err("the connection closed".into()));
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
            m.insert(id, tx);
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
            Ok(Ok(Err(e))) if e == "the connection closed" => Err(gone(&e)),
            Ok(Ok(Err(e))) => {
                Err(ToolError::new(ErrorCode::InvalidArgument, format!("the browser refused {method}: {e}"))
                    .with_prop("cdpError", e.clone()))
            }
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

/// The CDP error text of `e`, when it is one.
pub fn cdp_error(e: &ToolError) -> Option<String> {
    e.props().get("cdpError").and_then(Value::as_str).map(str::to_owned)
}
