//! Attacks on the memory family, each as it would be made: a `.eddie/cache.db` shipped in the
//! workspace with a trigger that never ends, another process holding the database's lock, a
//! Redis server that accepts and never answers (the abort must settle within a second), and
//! `MEMORY.md` files left inside a code fence or starting with a byte order mark.
#![cfg(feature = "memory")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::{Duration, Instant};

use eddie_tools_core::context::constant_confirm;
use eddie_tools_core::{Ctx, ErrorCode, registry};
use serde_json::{Value, json};

fn ctx(dir: &Path, env: &[(&str, String)]) -> Ctx {
    let env = env.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    Ctx::new(&dir.display().to_string()).unwrap().with_env(env).with_confirm(constant_confirm(true))
}

/// Abort `ctx`'s call after `after`.
fn abort_after(ctx: &Ctx, after: Duration) {
    let cancel = ctx.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(after);
        cancel.cancel();
    });
}

/// The cache schema as this crate creates it (made by a first store), then `extra` SQL.
fn plant_cache_db(ws: &Path, extra: &str) {
    let c = ctx(ws, &[]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(registry::run("cache_store", &json!({"key": "k", "value": "v", "tier": "project"}), &c))
        .unwrap();
    let db = rusqlite::Connection::open(ws.join(".eddie/cache.db")).unwrap();
    db.execute_batch(extra).unwrap();
    // Into the main file, as a shipped file would be.
    db.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
}

/// A workspace that comes with a `.eddie/cache.db` holding the cache schema and `extra`. (A
/// fresh process would open the planted file: this one already holds a connection to the
/// file it planted, so that file is copied into a new workspace.)
fn shipped(extra: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    plant_cache_db(ws.path(), extra);
    let out = tempfile::tempdir().unwrap();
    std::fs::create_dir(out.path().join(".eddie")).unwrap();
    std::fs::copy(ws.path().join(".eddie/cache.db"), out.path().join(".eddie/cache.db")).unwrap();
    out
}

/// Run a tool in its own thread and wait at most `limit` for it (a hang is a failure, not a
/// stuck test run).
fn run_bounded(tool: &'static str, args: Value, c: Ctx, limit: Duration) -> eddie_tools_core::Result<Value> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let out = rt.block_on(registry::run(tool, &args, &c)).map(|o| o.data_value().unwrap_or(Value::Null));
        let _ = tx.send(out);
    });
    rx.recv_timeout(limit).unwrap_or_else(|_| panic!("{tool} did not settle within {limit:?}"))
}

const RUNAWAY: &str = "
CREATE TABLE spin(x);
CREATE TRIGGER spin_forever AFTER INSERT ON entries BEGIN
  INSERT INTO spin SELECT x FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c);
END;";

#[test]
fn a_shipped_cache_db_with_a_trigger_that_never_ends_is_moved_aside_and_runs_nothing() {
    let ws = shipped(RUNAWAY);
    let store = || {
        let args = json!({"key": "a", "value": "b", "tier": "project"});
        run_bounded("cache_store", args, ctx(ws.path(), &[]), Duration::from_secs(20))
    };
    let started = Instant::now();
    let e = store().unwrap_err();
    assert_eq!(e.code(), ErrorCode::StoreCorrupted, "{}", e.message());
    assert!(e.message().contains("trigger spin_forever"), "{}", e.message());
    assert!(started.elapsed() < Duration::from_secs(5));
    let moved = e.props().get("movedTo").and_then(Value::as_str).unwrap().to_owned();
    assert!(Path::new(&moved).exists(), "kept aside, never deleted: {moved}");
    // The trigger never ran: its table in the file moved aside is empty.
    let aside = rusqlite::Connection::open(&moved).unwrap();
    let n: i64 = aside.query_row("SELECT count(*) FROM spin", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0);
    // The call did nothing; repeated, it works on a new database.
    let d = store().unwrap();
    assert_eq!(d["stored"], true);
    // Views and look-alike tables are foreign too.
    for extra in ["CREATE VIEW v AS SELECT 1;", "CREATE INDEX entries_size ON entries(size);"] {
        let copy = shipped(extra);
        let e = run_bounded(
            "cache_keys",
            json!({"tier": "project"}),
            ctx(copy.path(), &[]),
            Duration::from_secs(20),
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreCorrupted, "{extra}: {}", e.message());
    }
}

#[test]
fn a_lock_held_by_another_process_gives_way_to_the_abort() {
    let ws = tempfile::tempdir().unwrap();
    plant_cache_db(ws.path(), "");
    // Another connection (another process, as far as SQLite can tell) holds the write lock.
    let other = rusqlite::Connection::open(ws.path().join(".eddie/cache.db")).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE; INSERT INTO counters(name, n) VALUES ('held', 1);").unwrap();
    let c = ctx(ws.path(), &[]);
    abort_after(&c, Duration::from_millis(300));
    let started = Instant::now();
    let e = run_bounded(
        "cache_store",
        json!({"key": "x", "value": "y", "tier": "project"}),
        c,
        Duration::from_secs(20),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Cancelled, "{}", e.message());
    assert!(started.elapsed() < Duration::from_secs(2), "settled after {:?}", started.elapsed());
    other.execute_batch("ROLLBACK").unwrap();
    // The next call goes through.
    let d = run_bounded(
        "cache_retrieve",
        json!({"key": "k", "tier": "project"}),
        ctx(ws.path(), &[]),
        Duration::from_secs(20),
    )
    .unwrap();
    assert_eq!(d["found"], true);
}

/// A TCP server on loopback that accepts up to `limit` connections and never answers (each is
/// held, unanswered, for at most 30 s).
fn silent_server(limit: usize) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        let until = Instant::now() + Duration::from_secs(30);
        l.set_nonblocking(true).unwrap();
        while held.len() < limit && Instant::now() < until {
            match l.accept() {
                Ok((s, _)) => held.push(s),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    });
    port
}

#[test]
fn a_redis_server_that_never_answers_gives_way_to_the_abort_within_a_second() {
    let port = silent_server(16);
    let ws = tempfile::tempdir().unwrap();
    let env = [("EDDIE_CACHE_URL", format!("redis://127.0.0.1:{port}/"))];
    for (tool, args) in [
        ("cache_store", json!({"key": "k", "value": "v", "tier": "project"})),
        ("cache_retrieve", json!({"key": "k", "tier": "vault"})),
        ("cache_stats", json!({"tier": "project"})),
        ("cache_store", json!({"key": "k2", "value": "v", "tier": "project"})),
    ] {
        let c = ctx(ws.path(), &env);
        abort_after(&c, Duration::from_millis(300));
        let started = Instant::now();
        let out = run_bounded(tool, args, c, Duration::from_secs(30));
        let took = started.elapsed();
        let e = out.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled, "{tool}: {}", e.message());
        assert!(took < Duration::from_millis(1300), "{tool}: the abort settled after {took:?}");
    }
}

fn save(ws: &Path, key: &str, value: &str) -> Value {
    run_bounded("memory_save", json!({"key": key, "value": value}), ctx(ws, &[]), Duration::from_secs(20))
        .unwrap()
}

fn list(ws: &Path) -> Vec<String> {
    let d = run_bounded("memory_list", json!({}), ctx(ws, &[]), Duration::from_secs(20)).unwrap();
    d["entries"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn memory_md_left_inside_a_code_fence_saves_each_key_once_and_lists_it() {
    for fence in ["```", "~~~", "````sh"] {
        let ws = tempfile::tempdir().unwrap();
        let start = format!("# Memory\n\nA snippet someone pasted:\n\n{fence}\nmake all\n");
        std::fs::write(ws.path().join("MEMORY.md"), &start).unwrap();
        let first = save(ws.path(), "deploy", "run make deploy");
        assert_eq!(first["existed"], false, "{fence}");
        let second = save(ws.path(), "deploy", "run make deploy-prod");
        assert_eq!(second["existed"], true, "{fence}: the second save replaced the first");
        assert_eq!(list(ws.path()), ["deploy"], "{fence}");
        let text = std::fs::read_to_string(ws.path().join("MEMORY.md")).unwrap();
        assert!(text.starts_with(&start), "{fence}: the person's bytes are kept");
        assert_eq!(text.matches("## deploy").count(), 1, "{fence}: {text}");
        assert!(text.contains("run make deploy-prod"));
    }
}

#[test]
fn a_byte_order_mark_does_not_hide_the_first_entry() {
    let ws = tempfile::tempdir().unwrap();
    let start = "\u{feff}## first\n\none\n\n## second\n\ntwo\n";
    std::fs::write(ws.path().join("MEMORY.md"), start).unwrap();
    assert_eq!(list(ws.path()), ["first", "second"]);
    let d = save(ws.path(), "first", "uno");
    assert_eq!(d["existed"], true);
    let text = std::fs::read_to_string(ws.path().join("MEMORY.md")).unwrap();
    assert_eq!(text, "\u{feff}## first\n\nuno\n\n## second\n\ntwo\n");
    let d =
        run_bounded("memory_recall", json!({"query": "first"}), ctx(ws.path(), &[]), Duration::from_secs(20))
            .unwrap();
    assert_eq!(d["matches"][0]["key"], "first", "{d}");
}
