//! git over ssh without anything on the user's machine: a smart subtransport (like http(s) in
//! [`super::transport`]) whose stream is an `exec` channel (`git-upload-pack '<path>'` or
//! `git-receive-pack '<path>'`) of a pure-Rust ssh client ([`russh`], on ring). The connection
//! goes through the one network guard ([`crate::engine::net::guard::Guard::vet_ssh`]: the call's `ctx.network`, private
//! addresses refused unless allowed, the vetted address is the one connected to).
//!
//! The server's key must be in a `known_hosts` file (`UserKnownHostsFile` of `~/.ssh/config`,
//! else `~/.ssh/known_hosts` and `known_hosts2`; then `/etc/ssh/ssh_known_hosts`): an unknown
//! key is refused with its fingerprint, a changed one naming the file and line. The login is
//! tried as git's ssh would: each key of ssh-agent (`SSH_AUTH_SOCK`), then the default keys
//! (`~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`), then the `IdentityFile`s of `~/.ssh/config`
//! for the host. `AUTH_FAILED` names every key tried (its file or agent, type and
//! fingerprint), never a secret. `HOME` and `SSH_AUTH_SOCK` are read from `ctx.env` first.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream};
use russh::client::{self, AuthResult, Handle, Msg};
use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use russh::{Channel, ChannelMsg};
use url::Url;

use super::transport::{Op, current};
use crate::error::{ErrorCode, Result, ToolError};

/// The schemes registered for this transport (scp-like `host:path` URLs are routed to `ssh`
/// by libgit2).
pub(super) const SCHEMES: [&str; 3] = ["ssh", "ssh+git", "git+ssh"];

/// The default keys, in the order ssh tries them.
const DEFAULT_KEYS: [&str; 3] = ["id_ed25519", "id_ecdsa", "id_rsa"];

/// Whether `url` is an ssh remote: `ssh://` (or `git+ssh://`, `ssh+git://`), or git's scp-like
/// `[user@]host:path` (a colon before any slash).
pub fn is_ssh(url: &str) -> bool {
    let l = url.to_ascii_lowercase();
    SCHEMES.iter().any(|s| l.starts_with(&format!("{s}://"))) || scp_like(url).is_some()
}

/// `[user@]host:path` → (user, host, path), as git reads it.
fn scp_like(url: &str) -> Option<(Option<String>, String, String)> {
    if url.contains("://") {
        return None;
    }
    let (head, path) = url.split_once(':')?;
    if head.is_empty() || head.contains('/') || path.is_empty() {
        return None;
    }
    let (user, host) = match head.rsplit_once('@') {
        Some((u, h)) => (Some(u.to_owned()), h),
        None => (None, head),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return None;
    }
    Some((user, host.to_owned(), path.to_owned()))
}

/// Where an ssh remote is.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    user: Option<String>,
    host: String,
    port: Option<u16>,
    /// The repository's path as the server's shell gets it.
    path: String,
}

fn parse(url: &str) -> Result<Target> {
    let bad = || ToolError::new(ErrorCode::InvalidUrl, format!("{url:?} is not an ssh URL git can use"));
    if let Some((user, host, path)) = scp_like(url) {
        return Ok(Target { user, host, port: None, path });
    }
    let rest = url.split_once("://").map(|(_, r)| r).ok_or_else(bad)?;
    let u = Url::parse(&format!("ssh://{rest}")).map_err(|_| bad())?;
    let host = u.host_str().ok_or_else(bad)?.trim_start_matches('[').trim_end_matches(']').to_owned();
    let raw = u.path();
    let decoded = percent_decode(raw);
    // `ssh://host/~user/repo` names a path in a home folder, as in git.
    let path = match decoded.strip_prefix("/~") {
        Some(r) => format!("~{r}"),
        None => decoded,
    };
    if path.is_empty() || path == "/" {
        return Err(bad());
    }
    let user = (!u.username().is_empty()).then(|| percent_decode(u.username()));
    Ok(Target { user, host, port: u.port(), path })
}

fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_owned())
}

/// `'…'` for a POSIX shell (the server runs the command through the user's shell, as git's
/// ssh transport does).
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What `~/.ssh/config` says about one host (the first value of each key wins, as in ssh;
/// `IdentityFile` accumulates). `Include` is followed (relative names from `~/.ssh`, `*` and
/// `?` in file names, at most [`MAX_INCLUDE_DEPTH`] deep); `Match` blocks are not read.
#[derive(Debug, Default)]
struct HostConfig {
    host_name: Option<String>,
    user: Option<String>,
    port: Option<u16>,
    identity_files: Vec<PathBuf>,
    known_hosts: Vec<PathBuf>,
    /// `ProxyCommand …` or `ProxyJump …` (unless `none`), as written: a route this client does
    /// not take, so a connection the user's ssh would make through it is refused, not made
    /// directly.
    proxy: Option<String>,
}

/// How deep `Include`s nest before the rest is ignored (ssh's own limit).
const MAX_INCLUDE_DEPTH: usize = 16;

fn expand(v: &str, home: &Path, alias: &str) -> PathBuf {
    let v = v.replace("%h", alias).replace("%d", &home.to_string_lossy()).replace("%%", "%");
    match v.strip_prefix("~/") {
        Some(r) => home.join(r),
        None => PathBuf::from(v),
    }
}

fn host_config(home: &Path, alias: &str) -> HostConfig {
    let mut c = HostConfig::default();
    let mut active = true;
    read_config(&home.join(".ssh").join("config"), home, alias, 0, &mut active, &mut c);
    c
}

/// The files an `Include` names, in the order ssh reads them (each pattern's matches sorted).
fn included(value: &str, home: &Path, alias: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for word in value.split_whitespace() {
        let p = expand(word, home, alias);
        let p = if p.is_absolute() { p } else { home.join(".ssh").join(p) };
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !name.contains(['*', '?', '[']) {
            out.push(p);
            continue;
        }
        let Some(dir) = p.parent() else { continue };
        let Ok(glob) = globset::GlobBuilder::new(&name).literal_separator(true).build() else { continue };
        let m = glob.compile_matcher();
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok()).filter(|e| m.is_match(e.file_name())).map(|e| e.path()).collect()
            })
            .unwrap_or_default();
        found.sort();
        out.extend(found);
    }
    out
}

/// Read one config file into `c` for `alias`; `active` is whether the current `Host` block
/// applies.
fn read_config(file: &Path, home: &Path, alias: &str, depth: usize, active: &mut bool, c: &mut HostConfig) {
    let Ok(text) = std::fs::read_to_string(file) else { return };
    let matches =
        |p: &str| globset::Glob::new(p).map(|g| g.compile_matcher().is_match(alias)).unwrap_or(false);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = match line.find(|c: char| c.is_whitespace() || c == '=') {
            Some(i) => (&line[..i], line[i..].trim_start_matches(|c: char| c.is_whitespace() || c == '=')),
            None => (line, ""),
        };
        let value = value.trim().trim_matches('"');
        match key.to_ascii_lowercase().as_str() {
            "host" => {
                let pats: Vec<&str> = value.split_whitespace().collect();
                *active = pats.iter().any(|p| !p.starts_with('!') && matches(p))
                    && !pats.iter().any(|p| p.strip_prefix('!').is_some_and(matches));
            }
            "match" => *active = false,
            _ if !*active => {}
            "include" if depth < MAX_INCLUDE_DEPTH => {
                // A `Host` line inside an included file ends with that file: the including
                // block goes on as it was.
                for f in included(value, home, alias) {
                    let mut inner = true;
                    read_config(&f, home, alias, depth + 1, &mut inner, c);
                }
            }
            "hostname" if c.host_name.is_none() => c.host_name = Some(value.replace("%h", alias)),
            "user" if c.user.is_none() => c.user = Some(value.to_owned()),
            "port" if c.port.is_none() => c.port = value.parse().ok(),
            "identityfile" => c.identity_files.push(expand(value, home, alias)),
            "userknownhostsfile" if c.known_hosts.is_empty() => {
                c.known_hosts = value.split_whitespace().map(|v| expand(v, home, alias)).collect();
            }
            "proxycommand" | "proxyjump" if c.proxy.is_none() => {
                // The first value wins, and `none` is a value: it switches the route off.
                c.proxy = Some(if value.eq_ignore_ascii_case("none") {
                    String::new()
                } else {
                    format!("{key} {value}")
                });
            }
            _ => {}
        }
    }
}

/// `ALGORITHM SHA256:…` of a key, as ssh shows it.
fn describe(key: &PublicKey) -> String {
    format!("{} {}", key.algorithm().as_str(), key.fingerprint(HashAlg::Sha256))
}

/// `host` or `[host]:port`, as `known_hosts` names it.
fn host_port(host: &str, port: u16) -> String {
    if port == 22 { host.to_owned() } else { format!("[{host}]:{port}") }
}

/// Checks the server's key against the `known_hosts` files.
struct Checker {
    host: String,
    port: u16,
    files: Vec<PathBuf>,
    verdict: Arc<Mutex<Option<ToolError>>>,
}

impl Checker {
    /// `None` when a file vouches for `key`; else the refusal.
    fn refusal(&self, key: &PublicKey) -> Option<ToolError> {
        let name = host_port(&self.host, self.port);
        for f in &self.files {
            match russh::keys::check_known_hosts_path(&self.host, self.port, key, f) {
                Ok(true) => return None,
                Ok(false) => {}
                Err(russh::keys::Error::KeyChanged { line }) => {
                    return Some(ToolError::new(
                        ErrorCode::AuthFailed,
                        format!(
                            "the host key of {name} has changed: it offered {}, but line {line} of {} records another key for it. Someone may be intercepting the connection; if the server's key really changed, replace that line",
                            describe(key),
                            f.display()
                        ),
                    ));
                }
                // An unreadable or unparsable file vouches for nothing.
                Err(_) => {}
            }
        }
        let shown: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        Some(ToolError::new(
            ErrorCode::AuthFailed,
            format!(
                "host key verification failed: {name} offered the unknown host key {}, which is in no known_hosts file ({}). Check this fingerprint with the server's owner, then add the host's key to ~/.ssh/known_hosts",
                describe(key),
                shown.join(", ")
            ),
        ))
    }
}

impl client::Handler for Checker {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> std::result::Result<bool, Self::Error> {
        let refusal = match key {
            PublicKeyOrCertificate::PublicKey { key, .. } => self.refusal(key),
            PublicKeyOrCertificate::Certificate(_) => Some(ToolError::new(
                ErrorCode::AuthFailed,
                format!(
                    "{} offered a host certificate; only host keys listed in known_hosts are accepted",
                    host_port(&self.host, self.port)
                ),
            )),
        };
        match refusal {
            None => Ok(true),
            Some(e) => {
                if let Ok(mut v) = self.verdict.lock() {
                    *v = Some(e);
                }
                Ok(false)
            }
        }
    }
}

/// The subtransport for ssh remotes: one connection per `*Ls` action, reused by the action
/// after it (libgit2's stateful smart protocol).
pub(super) struct Ssh;

impl SmartSubtransport for Ssh {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> std::result::Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let op = current()
            .ok_or_else(|| git2::Error::from_str("git over ssh runs only inside an eddie git operation"))?;
        let program = match action {
            Service::UploadPackLs | Service::UploadPack => "git-upload-pack",
            Service::ReceivePackLs | Service::ReceivePack => "git-receive-pack",
        };
        match open(&op, url, program) {
            Ok(s) => Ok(Box::new(s)),
            Err(e) => Err(git2::Error::from_str(&op.fail(e).to_string())),
        }
    }

    fn close(&self) -> std::result::Result<(), git2::Error> {
        Ok(())
    }
}

/// Connect, check the host, log in, and start `program` on the repository.
fn open(op: &Arc<Op>, url: &str, program: &str) -> Result<Stream> {
    let t = parse(url)?;
    let home = op
        .ctx
        .env_var("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    let conf = host_config(&home, &t.host);
    if let Some(route) = conf.proxy.as_deref().filter(|r| !r.is_empty()) {
        return Err(ToolError::new(
            ErrorCode::Network,
            format!(
                "~/.ssh/config sends {} through `{route}`, which this built-in ssh client does not run (it would start a program or a second connection); it was not connected to directly either. Use the remote's https URL, or a Host entry without the proxy",
                t.host
            ),
        ));
    }
    let host = conf.host_name.clone().unwrap_or_else(|| t.host.clone());
    let port = t.port.or(conf.port).unwrap_or(22);
    let user = t
        .user
        .clone()
        .or_else(|| conf.user.clone())
        .or_else(|| op.ctx.env_var("USER"))
        .or_else(|| op.ctx.env_var("LOGNAME"))
        .unwrap_or_else(|| "git".into());
    let mut files = conf.known_hosts.clone();
    if files.is_empty() {
        files.push(home.join(".ssh").join("known_hosts"));
        files.push(home.join(".ssh").join("known_hosts2"));
    }
    files.push(PathBuf::from("/etc/ssh/ssh_known_hosts"));
    let agent_sock = op.ctx.env_var("SSH_AUTH_SOCK").filter(|s| !s.is_empty());
    let mut keys: Vec<PathBuf> = DEFAULT_KEYS.iter().map(|k| home.join(".ssh").join(k)).collect();
    for k in conf.identity_files {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let command = format!("{program} {}", shell_quote(&t.path));
    let shown = format!("ssh://{user}@{}", host_port(&host, port));
    let (handle, channel) = op.block(
        "connecting to the ssh server",
        login(op, &host, port, &user, &shown, files, agent_sock, keys, command),
    )?;
    Ok(Stream {
        op: Arc::clone(op),
        _handle: handle,
        channel,
        pending: Vec::new(),
        at: 0,
        stderr: String::new(),
        exit: None,
        done: false,
    })
}

#[allow(clippy::too_many_arguments)]
async fn login(
    op: &Op,
    host: &str,
    port: u16,
    user: &str,
    shown: &str,
    files: Vec<PathBuf>,
    agent_sock: Option<String>,
    keys: Vec<PathBuf>,
    command: String,
) -> Result<(Handle<Checker>, Channel<Msg>)> {
    let literal = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
    let url = Url::parse(&format!("ssh://{literal}:{port}"))
        .map_err(|_| ToolError::new(ErrorCode::InvalidUrl, format!("{host:?} is not a valid host name")))?;
    let vetted = op.guard.vet_ssh(&url).await?;
    let mut tcp = None;
    let mut last = String::new();
    for a in &vetted.addrs {
        match tokio::net::TcpStream::connect(a).await {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = format!("{a}: {e}"),
        }
    }
    let tcp = tcp.ok_or_else(|| {
        ToolError::new(ErrorCode::Network, format!("cannot connect to {}: {last}", host_port(host, port)))
    })?;
    let verdict = Arc::new(Mutex::new(None));
    let checker = Checker { host: host.to_owned(), port, files, verdict: Arc::clone(&verdict) };
    let config = Arc::new(client::Config { nodelay: true, ..Default::default() });
    let mut handle = match client::connect_stream(config, tcp, checker).await {
        Ok(h) => h,
        Err(e) => {
            let kept = verdict.lock().ok().and_then(|mut v| v.take());
            return Err(kept.unwrap_or_else(|| {
                ToolError::new(
                    ErrorCode::Network,
                    format!("the ssh handshake with {} failed: {e}", host_port(host, port)),
                )
            }));
        }
    };
    let net = |e: russh::Error| ToolError::new(ErrorCode::Network, format!("ssh with {shown}: {e}"));
    let mut tried: Vec<String> = Vec::new();
    let mut ok = false;
    if let Some(sock) = &agent_sock {
        ok = by_agent(&mut handle, user, sock, &mut tried).await?;
    }
    if !ok {
        let rsa = handle.best_supported_rsa_hash().await.map_err(net)?.flatten();
        for k in &keys {
            if !k.is_file() {
                continue;
            }
            let key = match russh::keys::load_secret_key(k, None) {
                Ok(key) => key,
                Err(russh::keys::Error::KeyIsEncrypted) => {
                    tried.push(format!("{} (needs a passphrase: add it to ssh-agent)", k.display()));
                    continue;
                }
                Err(e) => {
                    tried.push(format!("{} (unreadable: {e})", k.display()));
                    continue;
                }
            };
            tried.push(format!("{} ({})", k.display(), describe(key.public_key())));
            let r = handle
                .authenticate_publickey(user, PrivateKeyWithHashAlg::new(Arc::new(key), rsa))
                .await
                .map_err(net)?;
            if matches!(r, AuthResult::Success) {
                ok = true;
                break;
            }
        }
    }
    if !ok {
        let why = if tried.is_empty() {
            format!(
                "no key to offer: SSH_AUTH_SOCK {} and no key in ~/.ssh ({}) or IdentityFile of ~/.ssh/config",
                if agent_sock.is_some() { "names an agent with no key" } else { "is not set" },
                DEFAULT_KEYS.join(", ")
            )
        } else {
            format!("tried {}", tried.join(", then "))
        };
        return Err(ToolError::new(
            ErrorCode::AuthFailed,
            format!("{shown} refused the login as {user}: {why}"),
        ));
    }
    let channel = handle.channel_open_session().await.map_err(net)?;
    channel.exec(true, command).await.map_err(net)?;
    Ok((handle, channel))
}

/// Try each key of the agent at `sock`; `true` when one was accepted.
#[cfg(unix)]
async fn by_agent(
    handle: &mut Handle<Checker>,
    user: &str,
    sock: &str,
    tried: &mut Vec<String>,
) -> Result<bool> {
    use russh::keys::agent::AgentIdentity;
    use russh::keys::agent::client::AgentClient;
    let mut agent = match AgentClient::connect_uds(sock).await {
        Ok(a) => a,
        Err(e) => {
            tried.push(format!("ssh-agent at {sock} (cannot connect: {e})"));
            return Ok(false);
        }
    };
    let ids = match agent.request_identities().await {
        Ok(ids) => ids,
        Err(e) => {
            tried.push(format!("ssh-agent at {sock} (cannot list its keys: {e})"));
            return Ok(false);
        }
    };
    let rsa = handle
        .best_supported_rsa_hash()
        .await
        .map_err(|e| ToolError::new(ErrorCode::Network, format!("ssh: {e}")))?
        .flatten();
    for id in ids {
        let AgentIdentity::PublicKey { key, .. } = id else { continue };
        tried.push(format!("ssh-agent key {}", describe(&key)));
        let hash = if key.algorithm().is_rsa() { rsa } else { None };
        if let Ok(AuthResult::Success) = handle.authenticate_publickey_with(user, key, hash, &mut agent).await
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// ssh-agent over a Unix socket only; on other systems it is not tried.
#[cfg(not(unix))]
async fn by_agent(_: &mut Handle<Checker>, _: &str, sock: &str, tried: &mut Vec<String>) -> Result<bool> {
    tried.push(format!("ssh-agent at {sock} (not supported on this system)"));
    Ok(false)
}

/// The exec channel as libgit2's stream.
struct Stream {
    op: Arc<Op>,
    /// Kept so that the connection lives as long as the stream.
    _handle: Handle<Checker>,
    channel: Channel<Msg>,
    pending: Vec<u8>,
    at: usize,
    /// What the server's command wrote to stderr (kept for the message of a failure).
    stderr: String,
    exit: Option<u32>,
    done: bool,
}

impl Stream {
    fn read_inner(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.op.ctx.cancel.check()?;
        while self.at >= self.pending.len() {
            if self.done {
                return match self.exit {
                    Some(code) if code != 0 => Err(ToolError::new(
                        ErrorCode::Network,
                        format!(
                            "the ssh server's git command failed (exit {code}): {}",
                            self.stderr.trim().chars().take(2000).collect::<String>()
                        ),
                    )),
                    _ => Ok(0),
                };
            }
            let op = Arc::clone(&self.op);
            let channel = &mut self.channel;
            let msg = op.block("reading from the ssh server", async { Ok(channel.wait().await) })?;
            match msg {
                Some(ChannelMsg::Data { data }) => {
                    op.progress(data.len(), false);
                    self.pending = data.to_vec();
                    self.at = 0;
                }
                Some(ChannelMsg::ExtendedData { data, .. }) => {
                    if self.stderr.len() < 64 * 1024 {
                        self.stderr.push_str(&String::from_utf8_lossy(&data));
                    }
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => self.exit = Some(exit_status),
                Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                    // The exit status may follow the end of the data.
                    if self.exit.is_none()
                        && let Ok(Some(ChannelMsg::ExitStatus { exit_status })) =
                            op.block("reading from the ssh server", async {
                                Ok(tokio::time::timeout(std::time::Duration::from_secs(2), channel.wait())
                                    .await
                                    .ok()
                                    .flatten())
                            })
                    {
                        self.exit = Some(exit_status);
                    }
                    self.done = true;
                }
                Some(_) => {}
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }

    fn write_inner(&mut self, data: &[u8]) -> Result<()> {
        self.op.ctx.cancel.check()?;
        let op = Arc::clone(&self.op);
        let channel = &self.channel;
        let bytes = data.to_vec();
        op.block("writing to the ssh server", async {
            channel
                .data_bytes(bytes)
                .await
                .map_err(|e| ToolError::new(ErrorCode::Network, format!("writing to the ssh server: {e}")))
        })?;
        op.progress(data.len(), true);
        Ok(())
    }
}

impl std::io::Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.read_inner(buf).map_err(|e| self.op.fail(e))
    }
}

impl std::io::Write for Stream {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.write_inner(data).map_err(|e| self.op.fail(e))?;
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_urls_are_read_as_git_reads_them() {
        assert!(is_ssh("git@github.com:owner/repo.git"));
        assert!(is_ssh("ssh://git@example.com:2222/srv/repo.git"));
        assert!(is_ssh("git+ssh://example.com/repo"));
        assert!(!is_ssh("https://example.com/repo"));
        assert!(!is_ssh("/srv/repo.git"));
        assert!(!is_ssh("./a:b"));
        assert!(!is_ssh("file:///srv/repo"));
        let t = parse("git@github.com:owner/repo.git").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            t,
            Target {
                user: Some("git".into()),
                host: "github.com".into(),
                port: None,
                path: "owner/repo.git".into()
            }
        );
        let t = parse("ssh://ada@127.0.0.1:2222/srv/my%20repo.git").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            t,
            Target {
                user: Some("ada".into()),
                host: "127.0.0.1".into(),
                port: Some(2222),
                path: "/srv/my repo.git".into()
            }
        );
        let t = parse("ssh://h/~ada/r.git").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.path, "~ada/r.git");
        assert_eq!(shell_quote("/a'b; rm -rf /"), r"'/a'\''b; rm -rf /'");
    }

    #[test]
    fn ssh_config_gives_the_host_its_settings() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(t.path().join(".ssh")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            t.path().join(".ssh/config"),
            "Host other\n  User nobody\nHost gh *.example !bad.example\n  HostName %h.real\n  User git\n  Port 2200\n  IdentityFile ~/.ssh/work_key\nHost *\n  User late\n  IdentityFile /k2\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let c = host_config(t.path(), "gh");
        assert_eq!(c.host_name.as_deref(), Some("gh.real"));
        assert_eq!(c.user.as_deref(), Some("git"));
        assert_eq!(c.port, Some(2200));
        assert_eq!(c.identity_files, vec![t.path().join(".ssh/work_key"), PathBuf::from("/k2")]);
        let c = host_config(t.path(), "bad.example");
        assert_eq!(c.user.as_deref(), Some("late"));
        assert_eq!(c.port, None);
    }

    #[test]
    fn ssh_config_includes_nest_in_order_and_stop_at_the_depth_limit() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ssh = t.path().join(".ssh");
        std::fs::create_dir_all(ssh.join("d")).unwrap_or_else(|e| panic!("{e}"));
        let w = |p: &str, s: &str| std::fs::write(ssh.join(p), s).unwrap_or_else(|e| panic!("{e}"));
        w(
            "config",
            "Host other\n  Include d/never.txt\nHost gh\n  Include d/*.conf\n  Port 7\nHost *\n  User late\n",
        );
        // Read in name order: 1-a before 2-b; the Host line inside 2-b ends with its file.
        w("d/1-a.conf", "HostName first\n");
        w("d/2-b.conf", "HostName second\nIdentityFile ~/.ssh/k\nHost nomatch\nUser wrong\n");
        w("d/never.txt", "User never\n");
        // A file that includes itself stops at the depth limit.
        w("d/3-loop.conf", "IdentityFile /loop\nInclude d/3-loop.conf\n");
        let c = host_config(t.path(), "gh");
        assert_eq!(c.host_name.as_deref(), Some("first"));
        assert_eq!(c.port, Some(7));
        assert_eq!(c.user.as_deref(), Some("late"));
        assert_eq!(c.identity_files.first(), Some(&ssh.join("k")));
        assert_eq!(c.identity_files.len(), 1 + MAX_INCLUDE_DEPTH);
        assert_eq!(c.proxy, None);
        w("config", "Host gh\n  ProxyJump bastion\nHost *\n  ProxyCommand none\n");
        assert_eq!(host_config(t.path(), "gh").proxy.as_deref(), Some("ProxyJump bastion"));
        assert_eq!(host_config(t.path(), "x").proxy.as_deref(), Some(""));
    }
}
