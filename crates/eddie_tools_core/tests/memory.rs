//! The memory family: MEMORY.md edits (every byte outside the entry kept), BM25 recall, Stack's
//! task tools round-tripping with eddie's agent__* tools, and the cache tiers on real SQLite.
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::path::Path;

use eddie_tools_core::context::constant_confirm;
use eddie_tools_core::{Ctx, ToolOutput, registry};
use serde_json::{Value, json};

struct Ws {
    dir: tempfile::TempDir,
    user: tempfile::TempDir,
    env: HashMap<String, String>,
}

impl Ws {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let user = tempfile::tempdir().expect("tempdir");
        let mut env = HashMap::new();
        env.insert("EDDIE_USER_DIR".to_owned(), user.path().display().to_string());
        Self { dir, user, env }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn ctx(&self, yes: bool) -> Ctx {
        Ctx::new(&self.path().display().to_string())
            .expect("ctx")
            .with_confirm(constant_confirm(yes))
            .with_env(self.env.clone())
    }

    async fn run(&self, tool: &str, args: Value) -> eddie_tools_core::Result<ToolOutput> {
        registry::run(tool, &args, &self.ctx(true)).await
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        match self.run(tool, args.clone()).await {
            Ok(o) => o.data_value().expect("data"),
            Err(e) => panic!("{tool} {args}: {} {}", e.code().as_str(), e.message()),
        }
    }

    async fn code(&self, tool: &str, args: Value) -> &'static str {
        match self.run(tool, args.clone()).await {
            Ok(o) => panic!("{tool} {args} succeeded: {}", o.content),
            Err(e) => e.code().as_str(),
        }
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap_or_default()
    }
}

const HAND: &str = "# Project memory\n\nA note a person wrote by hand.\r\nWith CRLF, and trailing spaces.   \n\n## Build\n\nrun make\n\n# Appendix (by hand)\n\nkeep me exactly\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_save_list_recall_delete_keep_every_other_byte() {
    let w = Ws::new();
    std::fs::write(w.path().join("MEMORY.md"), HAND).unwrap();
    let d = w.ok("memory_save", json!({"key": "GPU Requirements", "value": "Minimum: 8GB VRAM"})).await;
    assert_eq!(d["saved"], true);
    assert_eq!(d["existed"], false);
    let after_add = w.read("MEMORY.md");
    assert_eq!(after_add, format!("{HAND}\n## GPU Requirements\n\nMinimum: 8GB VRAM\n"));
    // Replace: only the entry's bytes change.
    w.ok("memory_save", json!({"key": "Build", "value": "run make all"})).await;
    assert_eq!(w.read("MEMORY.md"), after_add.replace("run make\n", "run make all\n"));
    // Append (Stack's `title`/`content` spellings).
    let d = w
        .ok(
            "memory_save",
            json!({"title": "GPU Requirements", "content": "Recommended: 24GB", "mode": "append"}),
        )
        .await;
    assert_eq!(d["existed"], true);
    assert!(w.read("MEMORY.md").contains("## GPU Requirements\n\nMinimum: 8GB VRAM\nRecommended: 24GB\n"));
    let list = w.ok("memory_list", json!({})).await;
    assert_eq!(list["count"], 2);
    assert_eq!(list["entries"][0]["key"], "Build");
    // Recall: key words outrank body words.
    w.ok("memory_save", json!({"key": "Deploy", "value": "GPU nodes are in the basement"})).await;
    let r = w.ok("memory_recall", json!({"query": "gpu requirements", "max_results": 5})).await;
    assert_eq!(r["matches"][0]["key"], "GPU Requirements");
    assert_eq!(r["matches"][1]["key"], "Deploy");
    assert!(r["matches"][0]["score"].as_f64().unwrap() > r["matches"][1]["score"].as_f64().unwrap());
    let r = w.ok("memory_recall", json!({"query": "gpu", "maxResults": 1})).await;
    assert_eq!(r["count"], 1);
    // Delete: the file is back to the hand-written text plus what is left.
    w.ok("memory_delete", json!({"key": "Deploy"})).await;
    w.ok("memory_delete", json!({"key": "GPU Requirements"})).await;
    assert_eq!(w.read("MEMORY.md"), format!("{}\n", HAND.replace("run make\n", "run make all\n")));
    assert_eq!(w.code("memory_delete", json!({"key": "Deploy"})).await, "NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_bad_input_and_declines_change_nothing() {
    let w = Ws::new();
    std::fs::write(w.path().join("MEMORY.md"), HAND).unwrap();
    let big = "x".repeat(64 * 1024 + 1);
    for (args, code) in [
        (json!({"key": "", "value": "v"}), "INVALID_ARGUMENT"),
        (json!({"key": "  ", "value": "v"}), "INVALID_ARGUMENT"),
        (json!({"key": "a\nb", "value": "v"}), "INVALID_ARGUMENT"),
        (json!({"key": "k", "value": big}), "TOO_LARGE"),
        (json!({"key": "k", "value": "line\n## another"}), "INVALID_ARGUMENT"),
        (json!({"key": "k", "value": "```\nopen fence"}), "INVALID_ARGUMENT"),
        (json!({"key": "k", "value": "v", "mode": "merge"}), "INVALID_ARGUMENT"),
        (json!({"key": "k", "value": "v", "scope": "team"}), "INVALID_ARGUMENT"),
        (json!({"key": "k", "value": "v", "notAnArg": 1}), "INVALID_ARGUMENT"),
    ] {
        assert_eq!(w.code("memory_save", args.clone()).await, code, "{args}");
        assert_eq!(w.read("MEMORY.md"), HAND, "{args}");
    }
    // Declined: nothing changes, and the result says so.
    let out = registry::run("memory_save", &json!({"key": "k", "value": "v"}), &w.ctx(false)).await.unwrap();
    assert_eq!(out.data["cancelled"], true);
    let out = registry::run("memory_delete", &json!({"key": "Build"}), &w.ctx(false)).await.unwrap();
    assert_eq!(out.data["cancelled"], true);
    assert_eq!(w.read("MEMORY.md"), HAND);
    // An unreadable MEMORY.md (not UTF-8) is refused, and left as it was.
    let bad = b"## k\n\n\xff\xfe not text\n";
    std::fs::write(w.path().join("MEMORY.md"), bad).unwrap();
    assert_eq!(w.code("memory_save", json!({"key": "k", "value": "v"})).await, "PARSE");
    assert_eq!(w.code("memory_recall", json!({"query": "k"})).await, "PARSE");
    assert_eq!(std::fs::read(w.path().join("MEMORY.md")).unwrap(), bad);
    // A directory where MEMORY.md should be.
    std::fs::remove_file(w.path().join("MEMORY.md")).unwrap();
    std::fs::create_dir(w.path().join("MEMORY.md")).unwrap();
    assert_eq!(w.code("memory_save", json!({"key": "k", "value": "v"})).await, "IS_A_DIRECTORY");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_escape_is_refused_and_user_scope_lives_in_the_user_dir() {
    let w = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("MEMORY.md"), "## secret\n\nouter\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("MEMORY.md"), w.path().join("MEMORY.md")).unwrap();
    assert_eq!(w.code("memory_save", json!({"key": "k", "value": "v"})).await, "OUTSIDE_WORKSPACE");
    assert_eq!(w.code("memory_list", json!({})).await, "OUTSIDE_WORKSPACE");
    assert_eq!(std::fs::read_to_string(outside.path().join("MEMORY.md")).unwrap(), "## secret\n\nouter\n");
    std::fs::remove_file(w.path().join("MEMORY.md")).unwrap();
    w.ok("memory_save", json!({"key": "editor", "value": "vim", "scope": "user"})).await;
    assert_eq!(
        std::fs::read_to_string(w.user.path().join("MEMORY.md")).unwrap(),
        "# Memory\n\n## editor\n\nvim\n"
    );
    assert!(!w.path().join("MEMORY.md").exists());
    let r = w.ok("memory_recall", json!({"query": "editor", "scope": "user"})).await;
    assert_eq!(r["matches"][0]["content"], "vim");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_saves_in_one_process_lose_nothing() {
    let w = Ws::new();
    let ctx = w.ctx(true);
    let mut set = tokio::task::JoinSet::new();
    for i in 0..40 {
        let ctx = ctx.clone();
        set.spawn(async move {
            registry::run("memory_save", &json!({"key": format!("k{i}"), "value": format!("v{i}")}), &ctx)
                .await
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
    }
    let list = w.ok("memory_list", json!({})).await;
    assert_eq!(list["count"], 40);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stack_task_tools_round_trip_with_eddie_task_tools() {
    let w = Ws::new();
    // Stack writes, eddie reads.
    let t = w
        .ok("create_task", json!({"title": "Write docs", "description": "TOOLS.md", "priority": "high"}))
        .await;
    let id = t["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(t["task"]["priority"], "high");
    let doc: Value = serde_json::from_str(&w.read(".tasks/tasks.json")).unwrap();
    assert_eq!(doc["tasks"][0]["metadata"], json!({"priority": "high", "description": "TOOLS.md"}));
    let e = w.ok("agent__get_task_list", json!({"taskListName": "tasks"})).await;
    assert_eq!(e["tasks"][0]["title"], "Write docs");
    // Stack's done is eddie's complete.
    let u = w.ok("update_task", json!({"task_id": id, "status": "done", "priority": "low"})).await;
    assert_eq!(u["task"]["status"], "complete");
    let e = w.ok("agent__get_task_list", json!({"taskListName": "tasks"})).await;
    assert_eq!(e["tasks"][0]["status"], "complete");
    // eddie writes, Stack reads (details become the description; priority defaults to medium).
    w.ok("agent__new_task", json!({"taskListName": "tasks", "title": "From eddie", "details": "d"})).await;
    let l = w.ok("list_tasks", json!({"status": "pending"})).await;
    assert_eq!(l["count"], 1);
    assert_eq!(l["tasks"][0]["description"], "d");
    assert_eq!(l["tasks"][0]["priority"], "medium");
    let eddie_id = l["tasks"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(w.ok("list_tasks", json!({"status": "done"})).await["count"], 1);
    assert_eq!(w.ok("list_tasks", json!({"priority": "low"})).await["count"], 1);
    assert_eq!(w.ok("list_tasks", json!({"status": "all"})).await["count"], 2);
    w.ok(
        "agent__set_task_status",
        json!({"taskListName": "tasks", "taskId": eddie_id, "status": "in_progress"}),
    )
    .await;
    assert_eq!(
        w.ok("list_tasks", json!({"status": "in_progress"})).await["tasks"][0]["id"],
        eddie_id.as_str()
    );
    w.ok("delete_task", json!({"task_id": id})).await;
    assert_eq!(w.code("delete_task", json!({"task_id": id})).await, "TASK_NOT_FOUND");
    assert_eq!(w.code("update_task", json!({"task_id": eddie_id})).await, "INVALID_ARGUMENT");
    assert_eq!(w.code("create_task", json!({"title": "x", "priority": "urgent"})).await, "INVALID_ARGUMENT");
    // Plans: a task list of their own, readable by eddie.
    let p = w.ok("create_plan", json!({"goal": "Deploy", "steps": ["Build image", "Push", "Verify"]})).await;
    let pid = p["plan"]["id"].as_str().unwrap().to_owned();
    assert_eq!(p["plan"]["steps"].as_array().unwrap().len(), 3);
    let x = w.ok("execute_plan", json!({"plan_id": pid})).await;
    assert_eq!(x["status"], "in_progress");
    assert_eq!(x["steps"][0]["status"], "in_progress");
    let e = w.ok("agent__get_task_list", json!({"taskListName": pid})).await;
    assert_eq!(e["metadata"]["goal"], "Deploy");
    assert_eq!(e["tasks"][0]["status"], "in_progress");
    assert_eq!(w.code("execute_plan", json!({"plan_id": "plan-missing"})).await, "NOT_FOUND");
    assert_eq!(w.code("execute_plan", json!({"plan_id": "../x"})).await, "INVALID_ARGUMENT");
    assert_eq!(w.code("create_plan", json!({"goal": "g", "steps": []})).await, "INVALID_ARGUMENT");
    // Declined: nothing written.
    let before = w.read(".tasks/tasks.json");
    let out = registry::run("create_task", &json!({"title": "no"}), &w.ctx(false)).await.unwrap();
    assert_eq!(out.data["cancelled"], true);
    assert_eq!(w.read(".tasks/tasks.json"), before);
}

// ---- the cache

/// A redis-server of our own on a free loopback port, stopped (by its pid) when dropped.
struct RedisServer {
    child: std::process::Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// `None` when redis-server is not installed and CI is not set: the test is skipped, and says
    /// so on stderr (written past libtest's capture, which only holds `print!`/`eprint!` output).
    /// With CI=true (.ci/run) a missing redis-server fails the test.
    fn start(test: &str) -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let spawned = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) if !in_ci() => {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "{test}: skipped: redis-server is not installed ({e}); install it (Debian/Ubuntu: apt-get install redis-server) to run it (with CI=true a missing redis-server fails)"
                );
                return None;
            }
            Err(e) => panic!(
                "redis-server is required with CI=true and does not run ({e}); apt-get install -y redis-server"
            ),
        };
        let url = format!("redis://127.0.0.1:{port}/");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(Self { child, url, _dir: dir });
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        panic!("redis-server did not listen on {port}");
    }
}

/// CI=true (or any value but false/0), as .ci/run sets it: every component is required.
fn in_ci() -> bool {
    std::env::var("CI")
        .is_ok_and(|v| !v.is_empty() && !matches!(v.to_ascii_lowercase().as_str(), "false" | "0"))
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace whose persisted cache tiers live on `server` (or in SQLite when `None`).
fn backend_ws(server: Option<&RedisServer>) -> Ws {
    let mut w = Ws::new();
    if let Some(s) = server {
        w.env.insert("EDDIE_CACHE_URL".into(), s.url.clone());
        w.env.insert("EDDIE_CACHE_PROJECT".into(), w.path().display().to_string());
        w.env.insert("EDDIE_CACHE_USER".into(), w.user.path().display().to_string());
    }
    w
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_tiers_sqlite() {
    cache_tiers(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_tiers_redis() {
    let Some(server) = RedisServer::start("cache_tiers_redis") else { return };
    cache_tiers(Some(&server)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_ttl_and_lru_sqlite() {
    cache_ttl_and_lru(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_ttl_and_lru_redis() {
    let Some(server) = RedisServer::start("cache_ttl_and_lru_redis") else { return };
    cache_ttl_and_lru(Some(&server)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_bad_input_sqlite() {
    cache_bad_input(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_bad_input_redis() {
    let Some(server) = RedisServer::start("cache_bad_input_redis") else { return };
    cache_bad_input(Some(&server)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_unreachable_redis_is_store_unavailable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut w = Ws::new();
    w.env.insert("EDDIE_CACHE_URL".into(), format!("redis://127.0.0.1:{port}/"));
    assert_eq!(
        w.code("cache_store", json!({"key": "k", "value": "v", "tier": "project"})).await,
        "STORE_UNAVAILABLE"
    );
    // The reasoning tier does not need the server.
    w.ok("cache_store", json!({"key": "k", "value": "v"})).await;
}

async fn cache_tiers(server: Option<&RedisServer>) {
    let w = backend_ws(server);
    for tier in ["reasoning", "project", "vault"] {
        let d = w.ok("cache_store", json!({"key": format!("computation-{tier}"), "value": "{\"result\": 42}", "tier": tier, "ttl": 3_600_000})).await;
        assert_eq!(d["stored"], true);
        let r = w.ok("cache_retrieve", json!({"key": format!("computation-{tier}")})).await;
        assert_eq!(r["tier"], tier);
        assert_eq!(r["value"], "{\"result\": 42}");
        assert!(r["ttlRemainingMs"].as_u64().unwrap() > 3_590_000);
    }
    assert_eq!(w.path().join(".eddie/cache.db").exists(), server.is_none());
    assert_eq!(w.user.path().join("vault.db").exists(), server.is_none());
    let k = w.ok("cache_keys", json!({"pattern": "computation-*"})).await;
    assert_eq!(k["count"], 3);
    let k = w.ok("cache_keys", json!({"tier": "project", "pattern": "comp*-p?oject"})).await;
    assert_eq!(k["count"], 1);
    let k = w.ok("cache_keys", json!({"pattern": "computation-{vault,reasoning}"})).await;
    assert_eq!(k["count"], 2);
    let miss = w.ok("cache_retrieve", json!({"key": "absent"})).await;
    assert_eq!(miss["found"], false);
    let s = w.ok("cache_stats", json!({})).await;
    assert_eq!(s["tiers"]["project"]["entries"], 1);
    let backend = if server.is_some() { "redis" } else { "sqlite" };
    assert_eq!(s["tiers"]["project"]["backend"], backend);
    assert_eq!(s["tiers"]["vault"]["backend"], backend);
    assert_eq!(s["tiers"]["project"]["hits"], 1);
    assert_eq!(s["tiers"]["project"]["misses"], 1);
    assert_eq!(s["totals"]["entries"], 3);
    // A second process-level connection sees the same project store (the file is shared).
    let d = w.ok("cache_delete", json!({"key": "computation-project"})).await;
    assert_eq!(d["tiers"], json!(["project"]));
    let c = w.ok("cache_clear", json!({"tier": "reasoning"})).await;
    assert_eq!(c["total"], 1);
    let c = w.ok("cache_clear", json!({})).await;
    assert_eq!(c["total"], 1);
}

async fn cache_ttl_and_lru(server: Option<&RedisServer>) {
    for tier in ["reasoning", "project"] {
        let mut w = backend_ws(server);
        w.env.insert(format!("EDDIE_CACHE_MAX_BYTES_{}", tier.to_uppercase()), "100".into());
        w.ok("cache_store", json!({"key": "short", "value": "v", "tier": tier, "ttl": 30})).await;
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        assert_eq!(w.ok("cache_retrieve", json!({"key": "short", "tier": tier})).await["found"], false);
        assert_eq!(w.ok("cache_stats", json!({"tier": tier})).await["tiers"][tier]["expirations"], 1);
        // Four 30-byte entries (2-byte key + 28-byte value) in a 100-byte tier: the least recently
        // used one goes; a read refreshes an entry.
        let v = "x".repeat(28);
        for k in ["k1", "k2", "k3"] {
            w.ok("cache_store", json!({"key": k, "value": v, "tier": tier})).await;
        }
        assert_eq!(w.ok("cache_retrieve", json!({"key": "k1", "tier": tier})).await["found"], true);
        let d = w.ok("cache_store", json!({"key": "k4", "value": v, "tier": tier})).await;
        assert_eq!(d["evicted"], 1, "{tier}");
        let keys = w.ok("cache_keys", json!({"tier": tier})).await;
        let names: Vec<&str> =
            keys["keys"].as_array().unwrap().iter().map(|k| k["key"].as_str().unwrap()).collect();
        assert_eq!(names, ["k1", "k3", "k4"], "{tier}");
        let s = w.ok("cache_stats", json!({"tier": tier})).await;
        assert_eq!(s["tiers"][tier]["bytes"], 90);
        assert_eq!(s["tiers"][tier]["evictions"], 1);
        // A value larger than the tier's cap is refused, and the tier is unchanged.
        assert_eq!(
            w.code("cache_store", json!({"key": "big", "value": "y".repeat(120), "tier": tier})).await,
            "TOO_LARGE"
        );
        assert_eq!(w.ok("cache_keys", json!({"tier": tier})).await["count"], 3);
    }
}

async fn cache_bad_input(server: Option<&RedisServer>) {
    let mut w = backend_ws(server);
    w.env.insert("EDDIE_CACHE_MAX_VALUE_BYTES".into(), "10".into());
    w.ok("cache_store", json!({"key": "keep", "value": "v", "tier": "project"})).await;
    let before = w.ok("cache_keys", json!({})).await;
    for args in [
        json!({"key": "", "value": "v", "tier": "project"}),
        json!({"key": "k", "value": "more than ten bytes", "tier": "project"}),
        json!({"key": "k", "value": "v", "tier": "project", "ttl": -1}),
        json!({"key": "k", "value": "v", "tier": "project", "ttl": 0}),
        json!({"key": "k", "value": "v", "tier": "project", "ttl": "NaN"}),
        json!({"key": "k", "value": "v", "tier": "project", "ttl": "soon"}),
        json!({"key": "k", "value": "v", "tier": "cosmic"}),
        json!({"key": "k\u{0}", "value": "v", "tier": "project"}),
        json!({"key": "k", "value": 42, "tier": "project"}),
    ] {
        let code = w.code("cache_store", args.clone()).await;
        assert!(code == "INVALID_ARGUMENT" || code == "TOO_LARGE", "{args}: {code}");
    }
    assert_eq!(w.code("cache_keys", json!({"pattern": "a[b"})).await, "INVALID_ARGUMENT");
    assert_eq!(w.code("cache_retrieve", json!({"key": "k", "tier": "nope"})).await, "INVALID_ARGUMENT");
    assert_eq!(w.code("cache_clear", json!({"tier": "nope"})).await, "INVALID_ARGUMENT");
    let names = |v: &Value| {
        v["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| (k["key"].clone(), k["bytes"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&w.ok("cache_keys", json!({})).await), names(&before));
    // The workspace escape: .eddie leading out is refused.
    let v = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), v.path().join(".eddie")).unwrap();
    assert_eq!(
        v.code("cache_store", json!({"key": "k", "value": "v", "tier": "project"})).await,
        "OUTSIDE_WORKSPACE"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_database_is_moved_aside_and_a_new_one_started() {
    let w = Ws::new();
    std::fs::create_dir_all(w.path().join(".eddie")).unwrap();
    let garbage = b"this is not a database, but a file someone clobbered. ".repeat(200);
    std::fs::write(w.path().join(".eddie/cache.db"), &garbage).unwrap();
    let err = w.run("cache_store", json!({"key": "k", "value": "v", "tier": "project"})).await.unwrap_err();
    assert_eq!(err.code().as_str(), "STORE_CORRUPTED", "{}", err.message());
    let moved = err.props()["movedTo"].as_str().unwrap().to_owned();
    assert_eq!(std::fs::read(&moved).unwrap(), garbage, "the damaged file is kept, byte for byte");
    // The new database works.
    w.ok("cache_store", json!({"key": "k", "value": "v", "tier": "project"})).await;
    assert_eq!(w.ok("cache_retrieve", json!({"key": "k", "tier": "project"})).await["value"], "v");
}

// ---- context and project scan

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_load_finds_instruction_files_nearest_agents_md_first_within_a_budget() {
    let w = Ws::new();
    let d = w.path();
    write(d, "AGENTS.md", "root agents\n");
    write(d, "CLAUDE.md", "claude\n");
    write(d, "GEMINI.md", "gemini\n");
    write(d, ".github/copilot-instructions.md", "copilot\n");
    write(d, ".cursorrules", "cursor\n");
    write(d, ".cursor/rules/b.mdc", "rule b\n");
    write(d, ".cursor/rules/a.mdc", "rule a\n");
    write(d, ".cursor/rules/notes.txt", "not a rule\n");
    write(d, "SOUL.md", "soul\n");
    write(d, "TOOLS.md", "tools\n");
    write(d, "pkg/AGENTS.md", "pkg agents\n");
    write(d, "pkg/src/app.ts", "x\n");
    write(d, "other/AGENTS.md", "other agents\n");
    let r = w.ok("context_load", json!({"path": "pkg/src/app.ts"})).await;
    let paths: Vec<&str> =
        r["loaded"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "pkg/AGENTS.md",
            "AGENTS.md",
            "CLAUDE.md",
            "GEMINI.md",
            ".github/copilot-instructions.md",
            ".cursorrules",
            ".cursor/rules/a.mdc",
            ".cursor/rules/b.mdc",
            "SOUL.md",
            "TOOLS.md"
        ]
    );
    assert!(r["loaded"][0]["why"].as_str().unwrap().contains("nearest"), "{}", r["loaded"][0]["why"]);
    assert!(r["context"].as_str().unwrap().starts_with("<!-- pkg/AGENTS.md"));
    // A budget: files in order of precedence while they fit; the rest listed.
    let r = w.ok("context_load", json!({"path": "pkg", "maxBytes": 25})).await;
    let loaded: Vec<&str> =
        r["loaded"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(loaded[..2], ["pkg/AGENTS.md", "AGENTS.md"]);
    assert!(r["bytes"].as_u64().unwrap() <= 25);
    assert!(r["omitted"].as_array().unwrap().iter().any(|o| o["path"] == "CLAUDE.md"));
    // From the root only the root's AGENTS.md applies; an escape is refused; a link out is not read.
    let r = w.ok("context_load", json!({})).await;
    assert_eq!(r["loaded"][0]["path"], "AGENTS.md");
    assert!(r["loaded"].as_array().unwrap().iter().all(|f| f["path"] != "pkg/AGENTS.md"));
    assert_eq!(w.code("context_load", json!({"path": "../"})).await, "OUTSIDE_WORKSPACE");
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "AGENTS.md", "OUTSIDE SECRET\n");
    std::os::unix::fs::symlink(outside.path().join("AGENTS.md"), d.join("other/CLAUDE.md")).unwrap();
    let r = w.ok("context_load", json!({"path": "other"})).await;
    assert!(!r.to_string().contains("OUTSIDE SECRET"));
    assert_eq!(r["loaded"][0]["path"], "other/AGENTS.md");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_scan_counts_with_the_ignore_engine_and_finds_manifests_and_commands() {
    let w = Ws::new();
    let d = w.path();
    write(d, "package.json", r#"{"name": "demo", "scripts": {"test": "node --test", "build": "tsc"}}"#);
    write(d, "Dockerfile", "FROM node\n");
    write(d, "compose.yaml", "services: {}\n");
    write(d, ".github/workflows/ci.yml", "on: push\n");
    write(d, "src/a.ts", "a\nb\nc\n");
    write(d, "src/b.ts", "a\n");
    write(d, "src/c.py", "x = 1\ny = 2\n");
    write(d, ".gitignore", "generated/\n");
    write(d, "generated/big.ts", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    write(d, "node_modules/x/index.js", "module.exports = 1\n");
    std::fs::create_dir_all(d.join(".git")).unwrap();
    let r = w.ok("project_scan", json!({"path": "."})).await;
    assert_eq!(r["name"], "demo");
    assert_eq!(r["has_git"], true);
    assert_eq!(r["has_package_json"], true);
    assert_eq!(r["has_dockerfile"], true);
    assert_eq!(r["has_pyproject"], false);
    // package.json, Dockerfile, compose.yaml, src/{a,b}.ts, src/c.py (+ .gitignore and .github are hidden).
    assert_eq!(r["files"], 6, "{r}");
    assert_eq!(r["dirs"], 1, "{r}");
    assert_eq!(r["languages"][0]["language"], "TypeScript");
    assert_eq!(r["languages"][0]["lines"], 4);
    let manifests: Vec<&str> =
        r["manifests"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert_eq!(manifests, ["package.json", "Dockerfile", "compose.yaml", ".github/workflows/ci.yml"]);
    assert!(r["commands"]["test"]["command"].as_str().unwrap().contains("test"), "{}", r["commands"]);
    assert_eq!(w.code("project_scan", json!({"path": "../"})).await, "OUTSIDE_WORKSPACE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_keys_refuses_huge_or_too_complex_patterns() {
    let w = Ws::new();
    assert_eq!(w.code("cache_keys", json!({"pattern": "x".repeat(1 << 20)})).await, "INVALID_ARGUMENT");
    let nested = "{a,b}".repeat(800);
    let code = match w.run("cache_keys", json!({"pattern": nested})).await {
        Ok(_) => "ok",
        Err(e) => e.code().as_str(),
    };
    assert!(code == "ok" || code == "INVALID_ARGUMENT", "{code}");
}
