//! The network guard: which URLs a tool may reach. Only `http`/`https`; the host is resolved
//! and every address it resolves to is classified (loopback, RFC 1918, link-local with the
//! cloud metadata address, CGNAT, `0.0.0.0/8`, multicast and reserved ranges, IPv6 loopback,
//! unique-local, link-local and site-local, and the v4-mapped, v4-compatible, NAT64 and 6to4
//! forms of all of them). IPv4 literals in any spelling (`2130706433`, `0177.0.0.1`,
//! `0x7f.1`) are read the way browsers read them (the WHATWG URL parser) before the check.
//! The addresses that passed are what the client connects to ([`super::client`] pins them),
//! so a second DNS answer cannot switch the connection.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

use crate::context::{BoxFuture, Ctx, NetworkPolicy};
use crate::error::{ErrorCode, Result, ToolError};

/// How long a DNS lookup may take.
pub const DNS_TIMEOUT: Duration = Duration::from_secs(10);

/// Name resolution, injectable (tests answer with what they like).
pub trait Resolver: Send + Sync {
    /// The addresses of `host` (a domain name, never an IP literal), with `port`.
    fn lookup(&self, host: String, port: u16) -> BoxFuture<std::io::Result<Vec<SocketAddr>>>;
}

/// The system resolver (`getaddrinfo` on tokio's blocking pool).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup(&self, host: String, port: u16) -> BoxFuture<std::io::Result<Vec<SocketAddr>>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host.as_str(), port)).await?.collect()) })
    }
}

/// Why `ip` is not publicly routable (the rule's name), or `None` when it is.
pub fn classify(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4).map(str::to_owned),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], bits: u32) -> bool {
    let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn classify_v4(ip: Ipv4Addr) -> Option<&'static str> {
    const RULES: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "\"this network\" (0.0.0.0/8)"),
        ([10, 0, 0, 0], 8, "private (RFC 1918, 10.0.0.0/8)"),
        ([100, 64, 0, 0], 10, "carrier-grade NAT (100.64.0.0/10)"),
        ([127, 0, 0, 0], 8, "loopback (127.0.0.0/8)"),
        ([169, 254, 169, 254], 32, "cloud metadata (169.254.169.254, link-local)"),
        ([169, 254, 0, 0], 16, "link-local (169.254.0.0/16)"),
        ([172, 16, 0, 0], 12, "private (RFC 1918, 172.16.0.0/12)"),
        ([192, 0, 0, 0], 24, "IETF protocol assignments (192.0.0.0/24)"),
        ([192, 0, 2, 0], 24, "documentation (192.0.2.0/24)"),
        ([192, 88, 99, 0], 24, "6to4 relay anycast (192.88.99.0/24)"),
        ([192, 168, 0, 0], 16, "private (RFC 1918, 192.168.0.0/16)"),
        ([198, 18, 0, 0], 15, "benchmarking (198.18.0.0/15)"),
        ([198, 51, 100, 0], 24, "documentation (198.51.100.0/24)"),
        ([203, 0, 113, 0], 24, "documentation (203.0.113.0/24)"),
        ([224, 0, 0, 0], 4, "multicast (224.0.0.0/4)"),
        ([240, 0, 0, 0], 4, "reserved (240.0.0.0/4, incl. broadcast)"),
    ];
    RULES.iter().find(|(net, bits, _)| in_v4(ip, *net, *bits)).map(|(_, _, rule)| *rule)
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], bits: u32) -> bool {
    let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
    (u128::from(ip) & mask) == (u128::from(Ipv6Addr::from(net)) & mask)
}

/// The IPv4 address in the low 32 bits.
fn low_v4(ip: Ipv6Addr) -> Ipv4Addr {
    Ipv4Addr::from((u128::from(ip) & 0xffff_ffff) as u32)
}

fn classify_v6(ip: Ipv6Addr) -> Option<String> {
    let embedded = |form: &str, v4: Ipv4Addr| classify_v4(v4).map(|r| format!("{r} as {form} {ip}"));
    if ip.is_unspecified() {
        return Some("unspecified (::)".into());
    }
    if ip.is_loopback() {
        return Some("loopback (::1)".into());
    }
    // ::ffff:a.b.c.d (v4-mapped) and ::ffff:0:a.b.c.d (SIIT v4-translated)
    if in_v6(ip, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96) {
        return embedded("an IPv4-mapped address", low_v4(ip));
    }
    if in_v6(ip, [0, 0, 0, 0, 0xffff, 0, 0, 0], 96) {
        return embedded("an IPv4-translated address", low_v4(ip));
    }
    // ::a.b.c.d (v4-compatible, deprecated): the embedded address decides, and the form itself
    // is not routable anyway.
    if in_v6(ip, [0; 8], 96) {
        return Some(
            embedded("an IPv4-compatible address", low_v4(ip))
                .unwrap_or_else(|| format!("IPv4-compatible (::/96, deprecated) {ip}")),
        );
    }
    // NAT64: 64:ff9b::/96 embeds the target; 64:ff9b:1::/48 is local-use.
    if in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        return embedded("a NAT64 address", low_v4(ip));
    }
    if in_v6(ip, [0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48) {
        return Some("local-use NAT64 (64:ff9b:1::/48)".into());
    }
    // 6to4: 2002:AABB:CCDD::/48 embeds AA.BB.CC.DD.
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        let s = ip.segments();
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return embedded("a 6to4 address", v4);
    }
    const RULES: &[([u16; 8], u32, &str)] = &[
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "discard-only (100::/64)"),
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "Teredo (2001::/32)"),
        ([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28, "ORCHID (2001:10::/28)"),
        ([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28, "ORCHIDv2 (2001:20::/28)"),
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "documentation (2001:db8::/32)"),
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "documentation (3fff::/20)"),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "unique-local (fc00::/7)"),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local (fe80::/10)"),
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "site-local (fec0::/10)"),
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast (ff00::/8)"),
    ];
    RULES.iter().find(|(net, bits, _)| in_v6(ip, *net, *bits)).map(|(_, _, rule)| (*rule).to_owned())
}

/// Read an IPv4 address the way the WHATWG URL parser (and so every browser) reads a host:
/// one to four parts, each decimal, octal (`0` prefix) or hex (`0x`), the last one filling
/// the remaining bytes (`0x7f.1` is 127.0.0.1, `2130706433` too). `None` when it is not one.
pub fn parse_ipv4_loose(host: &str) -> Option<Ipv4Addr> {
    let host = host.strip_suffix('.').unwrap_or(host);
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        if p.is_empty() {
            return None;
        }
        let n = if digits.is_empty() { 0 } else { u64::from_str_radix(digits, radix).ok()? };
        nums.push(n);
    }
    let (last, init) = nums.split_last()?;
    if init.iter().any(|n| *n > 255) || *last >= 256u64.pow(5 - nums.len() as u32) {
        return None;
    }
    let mut v: u64 = *last;
    for (i, n) in init.iter().enumerate() {
        v += n << (8 * (3 - i));
    }
    Some(Ipv4Addr::from(v as u32))
}

/// One entry of `allowHosts`/`denyHosts`. An entry may carry a port (`127.0.0.1:8080`,
/// `[::1]:8080`, `example.com:443`, `*.example.com:8443`): then only that port matches.
#[derive(Debug, Clone)]
enum Rule {
    /// A name, exactly (lowercase, no trailing dot).
    Name(String, Option<u16>),
    /// `*.example.com` or `.example.com`: the name and every subdomain.
    Suffix(String, Option<u16>),
    /// An address range.
    Net(IpAddr, u32, Option<u16>),
}

/// Whether `ip` is this host: a loopback address or the unspecified address (`0.0.0.0` and
/// `::` connect to this host), in any of its IPv4-mapped spellings.
fn this_host(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.is_loopback() || in_v4(v4, [0, 0, 0, 0], 8),
        IpAddr::V6(v6) => v6.is_loopback() || v6.is_unspecified(),
    }
}

/// The loopback address an unspecified address connects to (`0.0.0.0` → `127.0.0.1`,
/// `::` → `::1`); `None` for every other address.
fn unspecified_as_loopback(ip: IpAddr) -> Option<IpAddr> {
    match canonical(ip) {
        IpAddr::V4(v4) if in_v4(v4, [0, 0, 0, 0], 8) => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        IpAddr::V6(v6) if v6.is_unspecified() => Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        _ => None,
    }
}

fn port_matches(rule: Option<u16>, port: u16) -> bool {
    rule.is_none_or(|p| p == port)
}

impl Rule {
    /// A range; an IPv4-mapped one (`::ffff:127.0.0.1`) as the IPv4 range it maps.
    fn net(ip: IpAddr, bits: u32, port: Option<u16>) -> Rule {
        match ip {
            IpAddr::V6(v6) if bits >= 96 && v6.to_ipv4_mapped().is_some() => {
                Rule::Net(canonical(ip), bits - 96, port)
            }
            _ => Rule::Net(ip, bits, port),
        }
    }

    /// Parse an entry. A port that is not a number from 0 to 65535 makes the entry invalid
    /// (`None`), unless `broad` (a deny list: the entry then applies to every port).
    fn parse(entry: &str, broad: bool) -> Option<Rule> {
        let e = entry.trim().to_ascii_lowercase();
        if e.is_empty() {
            return None;
        }
        if let Some((ip, bits)) = e.split_once('/')
            && let Ok(ip) = ip.trim_matches(|c| c == '[' || c == ']').parse::<IpAddr>()
        {
            let max = if ip.is_ipv4() { 32 } else { 128 };
            return bits.parse::<u32>().ok().filter(|b| *b <= max).map(|b| Rule::net(ip, b, None));
        }
        let full = |ip: IpAddr| if ip.is_ipv4() { 32 } else { 128 };
        if let Ok(ip) = e.parse::<IpAddr>() {
            return Some(Rule::net(ip, full(ip), None));
        }
        let port_of = |p: &str| -> Option<Option<u16>> {
            match p.parse::<u16>() {
                Ok(n) => Some(Some(n)),
                Err(_) if broad => Some(None),
                Err(_) => None,
            }
        };
        // `[v6]` or `[v6]:port`
        if let Some(rest) = e.strip_prefix('[') {
            let (ip, after) = rest.split_once(']')?;
            let ip = ip.split('%').next().unwrap_or(ip).parse::<IpAddr>().ok()?;
            let port = match after {
                "" => None,
                p => port_of(p.strip_prefix(':')?)?,
            };
            return Some(Rule::net(ip, full(ip), port));
        }
        // `host:port`
        let (host, port) = match e.rsplit_once(':') {
            Some((h, p)) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => (h, port_of(p)?),
            _ => (e.as_str(), None),
        };
        let host = host.trim_end_matches('.');
        if host.is_empty() {
            return None;
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Some(Rule::net(ip, full(ip), port));
        }
        if let Some(ip) = parse_ipv4_loose(host) {
            return Some(Rule::Net(IpAddr::V4(ip), 32, port));
        }
        if let Some(s) = host.strip_prefix("*.").or_else(|| host.strip_prefix('.')) {
            return Some(Rule::Suffix(s.to_owned(), port));
        }
        Some(Rule::Name(host.to_owned(), port))
    }

    fn matches_name(&self, name: &str, port: u16) -> bool {
        match self {
            Rule::Name(n, p) => n == name && port_matches(*p, port),
            Rule::Suffix(s, p) => {
                (name == s || name.strip_suffix(s.as_str()).is_some_and(|p| p.ends_with('.')))
                    && port_matches(*p, port)
            }
            Rule::Net(..) => false,
        }
    }

    fn matches_ip(&self, ip: IpAddr, port: u16) -> bool {
        let ip = canonical(ip);
        match *self {
            Rule::Net(IpAddr::V4(net), bits, p) => {
                port_matches(p, port)
                    && match ip {
                        IpAddr::V4(v4) => in_v4(v4, net.octets(), bits),
                        IpAddr::V6(_) => false,
                    }
            }
            Rule::Net(IpAddr::V6(net), bits, p) => {
                port_matches(p, port)
                    && match ip {
                        IpAddr::V6(v6) => in_v6(v6, net.segments(), bits),
                        IpAddr::V4(_) => false,
                    }
            }
            _ => false,
        }
    }

    /// Whether the rule names this host in some spelling (a loopback or unspecified address,
    /// a range holding one, or the name `localhost`), at `port`.
    fn names_this_host(&self, port: u16) -> bool {
        match self {
            Rule::Name(..) | Rule::Suffix(..) => self.matches_name("localhost", port),
            Rule::Net(ip, bits, p) => {
                port_matches(*p, port)
                    && (this_host(*ip)
                        || [
                            IpAddr::V4(Ipv4Addr::LOCALHOST),
                            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                            IpAddr::V6(Ipv6Addr::LOCALHOST),
                            IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                        ]
                        .into_iter()
                        .any(|h| Rule::Net(*ip, *bits, None).matches_ip(h, port)))
            }
        }
    }
}

/// `::ffff:a.b.c.d` as `a.b.c.d` (for the lists); other addresses as they are.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The policy a call runs under: `ctx.network`, else the environment
/// (`EDDIE_NET_ALLOW_PRIVATE=1`, `EDDIE_NET_ALLOW_HOSTS=a,b`, `EDDIE_NET_DENY_HOSTS=c`), read
/// by [`Ctx::env_set`] (`ctx.env` when given, else this process's environment).
pub fn policy_of(ctx: &Ctx) -> NetworkPolicy {
    if let Some(p) = &ctx.network {
        return p.clone();
    }
    let list = |k: &str| -> Vec<String> {
        ctx.env_set(k)
            .map(|v| {
                v.split([',', ' ']).filter(|s| !s.trim().is_empty()).map(|s| s.trim().to_owned()).collect()
            })
            .unwrap_or_default()
    };
    NetworkPolicy {
        allow_private: ctx
            .env_set("EDDIE_NET_ALLOW_PRIVATE")
            .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")),
        allow_hosts: list("EDDIE_NET_ALLOW_HOSTS"),
        deny_hosts: list("EDDIE_NET_DENY_HOSTS"),
    }
}

/// The guard of one call: a policy and a resolver.
#[derive(Clone)]
pub struct Guard {
    allow_private: bool,
    allow: Vec<Rule>,
    deny: Vec<Rule>,
    resolver: Arc<dyn Resolver>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").field("allow_private", &self.allow_private).finish_non_exhaustive()
    }
}

/// What the guard let through: the URL and the addresses it may connect to.
#[derive(Debug, Clone)]
pub struct Vetted {
    /// The URL.
    pub url: Url,
    /// Its host's addresses, every one checked.
    pub addrs: Vec<SocketAddr>,
}

/// `BLOCKED_ADDRESS` naming the rule.
fn blocked(msg: String) -> ToolError {
    ToolError::new(ErrorCode::BlockedAddress, msg)
}

const HOW_TO_ALLOW: &str = "private and local addresses are refused; a host can allow them with ctx.network.allowHosts or EDDIE_NET_ALLOW_HOSTS";

impl Guard {
    /// The guard for `policy`, resolving with the system resolver.
    pub fn new(policy: &NetworkPolicy) -> Self {
        Self::with_resolver(policy, Arc::new(SystemResolver))
    }

    /// The guard for `policy` with `resolver`.
    pub fn with_resolver(policy: &NetworkPolicy, resolver: Arc<dyn Resolver>) -> Self {
        Self {
            allow_private: policy.allow_private,
            allow: policy.allow_hosts.iter().filter_map(|e| Rule::parse(e, false)).collect(),
            deny: policy.deny_hosts.iter().filter_map(|e| Rule::parse(e, true)).collect(),
            resolver,
        }
    }

    /// The guard of a call: [`policy_of`] the ctx, the system resolver.
    pub fn for_ctx(ctx: &Ctx) -> Self {
        Self::new(&policy_of(ctx))
    }

    /// Check what can be checked without the network: the scheme, the host, the deny list,
    /// and an IP literal's class.
    pub fn precheck(&self, url: &Url) -> Result<()> {
        match url.scheme() {
            "http" | "https" => {}
            other => {
                return Err(ToolError::new(
                    ErrorCode::UnsupportedScheme,
                    format!("{other}: URLs are not fetched; only http and https are"),
                ));
            }
        }
        self.precheck_host(url)
    }

    /// [`Self::precheck`] without the scheme: the host, the deny list, an IP literal's class.
    fn precheck_host(&self, url: &Url) -> Result<()> {
        let Some(host) = url.host() else {
            return Err(ToolError::new(ErrorCode::InvalidUrl, format!("{url} has no host")));
        };
        let port = port_of(url);
        if let Host::Domain(name) = &host {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if self.deny.iter().any(|r| r.matches_name(&name, port)) {
                return Err(blocked(format!("{name} is refused by the denyHosts policy")));
            }
        }
        match host {
            Host::Ipv4(v4) => self.check_addr(url.as_str(), false, IpAddr::V4(v4), port),
            Host::Ipv6(v6) => self.check_addr(url.as_str(), false, IpAddr::V6(v6), port),
            Host::Domain(_) => Ok(()),
        }
    }

    /// Whether `denyHosts` refuses `ip` at `port`. This host is one host: a rule naming it in
    /// any spelling (`127.0.0.1`, `::1`, `0.0.0.0`, `localhost`, a range holding one of them)
    /// refuses every loopback and unspecified address.
    fn denied(&self, ip: IpAddr, port: u16) -> bool {
        self.deny.iter().any(|r| r.matches_ip(ip, port) || (this_host(ip) && r.names_this_host(port)))
    }

    /// Whether `allowHosts` names `ip` at `port` (an unspecified address counts as the
    /// loopback address it connects to).
    fn allowed(&self, ip: IpAddr, port: u16) -> bool {
        let alias = unspecified_as_loopback(ip);
        self.allow.iter().any(|r| r.matches_ip(ip, port) || alias.is_some_and(|a| r.matches_ip(a, port)))
    }

    fn check_addr(&self, shown: &str, name_allowed: bool, ip: IpAddr, port: u16) -> Result<()> {
        if self.denied(ip, port) {
            return Err(blocked(format!("{shown}: {ip} is refused by the denyHosts policy")));
        }
        let Some(rule) = classify(ip) else { return Ok(()) };
        if self.allow_private || name_allowed || self.allowed(ip, port) {
            return Ok(());
        }
        Err(blocked(format!("{shown} resolves to {ip}: {rule}; {HOW_TO_ALLOW}")))
    }

    /// Resolve the URL's host and check every address; the result is what to connect to.
    pub async fn vet(&self, url: &Url) -> Result<Vetted> {
        self.precheck(url)?;
        self.resolve(url).await
    }

    /// [`Self::vet`] for an `ssh://host[:port]` URL (git over ssh): the same host and address
    /// rules, port 22 unless given.
    pub async fn vet_ssh(&self, url: &Url) -> Result<Vetted> {
        if url.scheme() != "ssh" {
            return Err(ToolError::new(ErrorCode::UnsupportedScheme, format!("{url} is not an ssh URL")));
        }
        self.precheck_host(url)?;
        self.resolve(url).await
    }

    /// Resolve the URL's host (checked by [`Self::precheck_host`]) and check every address.
    async fn resolve(&self, url: &Url) -> Result<Vetted> {
        let port = port_of(url);
        let addrs = match url.host() {
            Some(Host::Ipv4(v4)) => vec![SocketAddr::new(IpAddr::V4(v4), port)],
            Some(Host::Ipv6(v6)) => vec![SocketAddr::new(IpAddr::V6(v6), port)],
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                let found = tokio::time::timeout(DNS_TIMEOUT, self.resolver.lookup(name.clone(), port))
                    .await
                    .map_err(|_| {
                        ToolError::new(
                            ErrorCode::Dns,
                            format!("resolving {name} took more than {} s", DNS_TIMEOUT.as_secs()),
                        )
                    })?
                    .map_err(|e| ToolError::new(ErrorCode::Dns, format!("cannot resolve {name}: {e}")))?;
                if found.is_empty() {
                    return Err(ToolError::new(ErrorCode::Dns, format!("{name} has no address")));
                }
                let name_allowed = self.allow.iter().any(|r| r.matches_name(&name, port));
                for a in &found {
                    self.check_addr(&name, name_allowed, a.ip(), port)?;
                }
                found.into_iter().map(|a| SocketAddr::new(a.ip(), port)).collect()
            }
            None => return Err(ToolError::new(ErrorCode::InvalidUrl, format!("{url} has no host"))),
        };
        Ok(Vetted { url: url.clone(), addrs })
    }
}

/// The port `url` connects to: its own, else its scheme's (22 for ssh, 80 for an unknown one).
fn port_of(url: &Url) -> u16 {
    url.port_or_known_default().unwrap_or(if url.scheme() == "ssh" { 22 } else { 80 })
}

/// Parse a URL a model gave: trimmed; a bare `host/path` gets `https://` (the scheme most
/// pages are served on); anything else that does not parse is `INVALID_URL`.
pub fn parse_url(raw: &str) -> Result<Url> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(ToolError::new(ErrorCode::InvalidUrl, "url must be a non-empty http(s) URL"));
    }
    if s.contains(['\0', '\n', '\r']) {
        return Err(ToolError::new(ErrorCode::InvalidUrl, "url must not contain NUL or line breaks"));
    }
    let has_scheme = s.split_once(':').is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && !rest.starts_with(|c: char| c.is_ascii_digit())
    });
    let text = if has_scheme { s.to_owned() } else { format!("https://{}", s.trim_start_matches('/')) };
    let url = Url::parse(&text).map_err(|e| {
        ToolError::new(
            ErrorCode::InvalidUrl,
            format!("{s} is not a valid URL ({e}); give a full http(s) URL"),
        )
    })?;
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> IpAddr {
        IpAddr::V4(s.parse().unwrap())
    }
    fn v6(s: &str) -> IpAddr {
        IpAddr::V6(s.parse().unwrap())
    }

    #[test]
    fn every_blocked_ipv4_range_and_its_edges() {
        let blocked = [
            "0.0.0.0",
            "0.255.255.255",
            "10.0.0.0",
            "10.255.255.255",
            "100.64.0.0",
            "100.127.255.255",
            "127.0.0.1",
            "127.255.255.254",
            "169.254.0.1",
            "169.254.169.254",
            "172.16.0.0",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.0.1",
            "192.168.255.255",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.255",
            "240.0.0.1",
            "255.255.255.255",
        ];
        for ip in blocked {
            assert!(classify(v4(ip)).is_some(), "{ip} must be blocked");
        }
        let public = [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "93.184.216.34",
        ];
        for ip in public {
            assert_eq!(classify(v4(ip)), None, "{ip} is public");
        }
        assert!(classify(v4("169.254.169.254")).unwrap().contains("metadata"));
        assert!(classify(v4("127.0.0.1")).unwrap().contains("loopback"));
    }

    #[test]
    fn every_blocked_ipv6_range_and_the_embedded_forms() {
        let blocked = [
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "feff::1",
            "ff02::1",
            "2001:db8::1",
            "100::1",
            "2001::1",
            "64:ff9b:1::1",
            // v4-mapped, v4-translated, v4-compatible, NAT64 and 6to4 of private addresses
            "::ffff:127.0.0.1",
            "::ffff:7f00:1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:0:127.0.0.1",
            "::127.0.0.1",
            "::10.0.0.1",
            "::169.254.169.254",
            "::8.8.8.8",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::192.168.1.1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2002:c0a8:0101::1",
            "2002:0a00:0001:1::5",
        ];
        for ip in blocked {
            assert!(classify(v6(ip)).is_some(), "{ip} must be blocked");
        }
        let public = [
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:0808:0808::1",
        ];
        for ip in public {
            assert_eq!(classify(v6(ip)), None, "{ip} is public");
        }
        assert!(classify(v6("::ffff:169.254.169.254")).unwrap().contains("metadata"));
        assert!(classify(v6("2002:7f00:1::")).unwrap().contains("6to4"));
        assert!(classify(v6("64:ff9b::7f00:1")).unwrap().contains("NAT64"));
    }

    #[test]
    fn ipv4_spellings_are_read_like_browsers_read_them() {
        let cases = [
            ("127.0.0.1", "127.0.0.1"),
            ("2130706433", "127.0.0.1"),
            ("0x7f000001", "127.0.0.1"),
            ("0x7f.1", "127.0.0.1"),
            ("0x7F.0.0.1", "127.0.0.1"),
            ("0177.0.0.1", "127.0.0.1"),
            ("0177.1", "127.0.0.1"),
            ("127.1", "127.0.0.1"),
            ("127.0.1", "127.0.0.1"),
            ("017700000001", "127.0.0.1"),
            ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
            ("2852039166", "169.254.169.254"),
            ("0251.0376.0251.0376", "169.254.169.254"),
            ("0", "0.0.0.0"),
            ("10.1", "10.0.0.1"),
            ("127.0.0.1.", "127.0.0.1"),
        ];
        for (spelling, want) in cases {
            assert_eq!(parse_ipv4_loose(spelling), Some(want.parse().unwrap()), "{spelling}");
            // The URL parser agrees, so the guard sees the same address.
            let url = parse_url(&format!("http://{spelling}/")).unwrap();
            assert_eq!(url.host(), Some(Host::Ipv4(want.parse().unwrap())), "{spelling}");
        }
        for not in ["256.1.1.1", "1.2.3.4.5", "example.com", "1..2", "4294967296", "09.1.1.1"] {
            assert_eq!(parse_ipv4_loose(not), None, "{not}");
        }
    }

    fn guard(p: NetworkPolicy) -> Guard {
        Guard::new(&p)
    }

    #[tokio::test]
    async fn literal_hosts_are_refused_in_every_spelling_and_named_by_rule() {
        let g = guard(NetworkPolicy::default());
        for u in [
            "http://127.0.0.1/",
            "http://0x7f.1/",
            "http://2130706433/",
            "http://0177.0.0.1:8080/x",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:a9fe:a9fe]/latest/meta-data",
            "http://169.254.169.254/latest/meta-data/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2002:a9fe:a9fe::]/",
            "http://[fd00::1]/",
            "http://[fe80::1%25eth0]/",
            "https://10.0.0.1/",
            "http://0.0.0.0:80/",
            "http://100.100.100.200/",
        ] {
            let Ok(url) = parse_url(u) else { continue };
            let e = g.vet(&url).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::BlockedAddress, "{u}: {}", e.message());
        }
        let e = g.vet(&parse_url("http://169.254.169.254/").unwrap()).await.unwrap_err();
        assert!(e.message().contains("cloud metadata"), "{}", e.message());
    }

    #[tokio::test]
    async fn schemes_other_than_http_are_refused() {
        let g = guard(NetworkPolicy::default());
        for u in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://x:70/",
            "data:text/plain,hi",
            "javascript:alert(1)",
            "ws://x/",
        ] {
            let e = g.vet(&parse_url(u).unwrap()).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::UnsupportedScheme, "{u}");
        }
        for u in ["", "http://", "http://exa mple.com/", "http://[::1/"] {
            let e = parse_url(u).and_then(|u| g.precheck(&u)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidUrl, "{u}");
        }
        assert_eq!(parse_url("example.com/a").unwrap().as_str(), "https://example.com/a");
        assert_eq!(parse_url("localhost:8080/x").unwrap().as_str(), "https://localhost:8080/x");
    }

    struct Fixed(Vec<IpAddr>);
    impl Resolver for Fixed {
        fn lookup(&self, _host: String, port: u16) -> BoxFuture<std::io::Result<Vec<SocketAddr>>> {
            let v = self.0.iter().map(|ip| SocketAddr::new(*ip, port)).collect();
            Box::pin(async move { Ok(v) })
        }
    }

    #[tokio::test]
    async fn names_are_resolved_and_every_address_checked_and_policy_opens_or_closes() {
        let url = parse_url("http://intranet.example:8080/").unwrap();
        let mixed = Arc::new(Fixed(vec![v4("93.184.216.34"), v4("10.0.0.5")]));
        let g = Guard::with_resolver(&NetworkPolicy::default(), mixed.clone());
        let e = g.vet(&url).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::BlockedAddress);
        assert!(e.message().contains("10.0.0.5") && e.message().contains("RFC 1918"), "{}", e.message());
        // allowHosts by name, by address, by range, or allowPrivate opens it.
        for allow in [
            NetworkPolicy { allow_hosts: vec!["intranet.example".into()], ..Default::default() },
            NetworkPolicy { allow_hosts: vec!["*.example".into()], ..Default::default() },
            NetworkPolicy { allow_hosts: vec!["10.0.0.0/8".into()], ..Default::default() },
            NetworkPolicy { allow_hosts: vec!["10.0.0.5".into()], ..Default::default() },
            NetworkPolicy { allow_private: true, ..Default::default() },
        ] {
            let g = Guard::with_resolver(&allow, mixed.clone());
            let v = g.vet(&url).await.unwrap();
            assert_eq!(v.addrs.len(), 2);
            assert!(v.addrs.iter().all(|a| a.port() == 8080));
        }
        // denyHosts refuses even a public address, by name or by address.
        let public = Arc::new(Fixed(vec![v4("93.184.216.34")]));
        for deny in ["intranet.example", ".example", "93.184.216.0/24"] {
            let p =
                NetworkPolicy { deny_hosts: vec![deny.into()], allow_private: true, ..Default::default() };
            let e = Guard::with_resolver(&p, public.clone()).vet(&url).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::BlockedAddress, "{deny}");
        }
        assert!(Guard::with_resolver(&NetworkPolicy::default(), public).vet(&url).await.is_ok());
        // an allowed address does not open its neighbours
        let p = NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() };
        assert!(guard(p.clone()).vet(&parse_url("http://127.0.0.1:9/").unwrap()).await.is_ok());
        assert!(guard(p.clone()).vet(&parse_url("http://[::ffff:127.0.0.1]:9/").unwrap()).await.is_ok());
        assert_eq!(
            guard(p).vet(&parse_url("http://127.0.0.2/").unwrap()).await.unwrap_err().code(),
            ErrorCode::BlockedAddress
        );
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_fails_fast_with_dns() {
        struct Fails;
        impl Resolver for Fails {
            fn lookup(&self, host: String, _: u16) -> BoxFuture<std::io::Result<Vec<SocketAddr>>> {
                Box::pin(async move { Err(std::io::Error::other(format!("{host}: no such host"))) })
            }
        }
        let g = Guard::with_resolver(&NetworkPolicy::default(), Arc::new(Fails));
        let e = g.vet(&parse_url("https://nowhere.invalid/").unwrap()).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Dns);
        let g = Guard::with_resolver(&NetworkPolicy::default(), Arc::new(Fixed(vec![])));
        assert_eq!(
            g.vet(&parse_url("https://empty.invalid/").unwrap()).await.unwrap_err().code(),
            ErrorCode::Dns
        );
    }

    #[test]
    fn policy_comes_from_ctx_network_else_the_environment() {
        let ctx = Ctx::new(".").unwrap().with_env(
            [
                ("EDDIE_NET_ALLOW_PRIVATE".to_owned(), "1".to_owned()),
                ("EDDIE_NET_ALLOW_HOSTS".to_owned(), "a.example, 10.0.0.0/8".to_owned()),
            ]
            .into_iter()
            .collect(),
        );
        let p = policy_of(&ctx);
        assert!(p.allow_private);
        assert_eq!(p.allow_hosts, vec!["a.example", "10.0.0.0/8"]);
        let ctx = ctx.with_network(NetworkPolicy::default());
        assert_eq!(policy_of(&ctx), NetworkPolicy::default());
    }

    fn vet_code(p: &NetworkPolicy, url: &str) -> Option<ErrorCode> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(guard(p.clone()).vet(&parse_url(url).unwrap())).err().map(|e| e.code())
    }

    #[test]
    fn a_port_in_allow_hosts_opens_that_port_only() {
        for entry in ["127.0.0.1:8080", "[::ffff:127.0.0.1]:8080", "0x7f.1:8080"] {
            let p = NetworkPolicy { allow_hosts: vec![entry.into()], ..Default::default() };
            assert_eq!(vet_code(&p, "http://127.0.0.1:8080/"), None, "{entry}");
            assert_eq!(vet_code(&p, "http://127.0.0.1:8081/"), Some(ErrorCode::BlockedAddress), "{entry}");
            assert_eq!(vet_code(&p, "http://127.0.0.1/"), Some(ErrorCode::BlockedAddress), "{entry}");
        }
        let p = NetworkPolicy { allow_hosts: vec!["[::1]:8080".into()], ..Default::default() };
        assert_eq!(vet_code(&p, "http://[::1]:8080/"), None);
        assert_eq!(vet_code(&p, "http://[::1]:9090/"), Some(ErrorCode::BlockedAddress));
        assert_eq!(vet_code(&p, "http://127.0.0.1:8080/"), Some(ErrorCode::BlockedAddress));
        // A port that is not one makes an allow entry invalid (it opens nothing) ...
        let p = NetworkPolicy { allow_hosts: vec!["127.0.0.1:99999".into()], ..Default::default() };
        assert_eq!(vet_code(&p, "http://127.0.0.1:9999/"), Some(ErrorCode::BlockedAddress));
        // ... and a deny entry broader (it refuses every port).
        let p = NetworkPolicy {
            allow_private: true,
            deny_hosts: vec!["127.0.0.1:99999".into()],
            ..Default::default()
        };
        assert_eq!(vet_code(&p, "http://127.0.0.1:9999/"), Some(ErrorCode::BlockedAddress));
        // A name with a port, and a suffix with a port.
        let named = Arc::new(Fixed(vec![v4("10.0.0.5")]));
        for entry in ["intranet.example:8080", "*.example:8080"] {
            let p = NetworkPolicy { allow_hosts: vec![entry.into()], ..Default::default() };
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let g = Guard::with_resolver(&p, named.clone());
            assert!(
                rt.block_on(g.vet(&parse_url("http://intranet.example:8080/").unwrap())).is_ok(),
                "{entry}"
            );
            let e = rt.block_on(g.vet(&parse_url("http://intranet.example:8081/").unwrap())).unwrap_err();
            assert_eq!(e.code(), ErrorCode::BlockedAddress, "{entry}");
        }
    }

    #[test]
    fn deny_hosts_names_this_host_in_every_spelling() {
        // Whatever spelling the deny list uses for this host, every other spelling is refused
        // too, even with every private address allowed.
        let spellings = [
            "http://127.0.0.1:8080/",
            "http://0.0.0.0:8080/",
            "http://0:8080/",
            "http://[::]:8080/",
            "http://[::1]:8080/",
            "http://127.1:8080/",
            "http://0x7f.1:8080/",
            "http://2130706433:8080/",
            "http://0177.0.0.1:8080/",
            "http://[::ffff:127.0.0.1]:8080/",
            "http://[::ffff:0.0.0.0]:8080/",
            "http://127.0.0.2:8080/",
        ];
        for deny in ["127.0.0.1", "::1", "[::1]", "0.0.0.0", "127.0.0.0/8", "localhost", "127.0.0.1:8080"] {
            let p = NetworkPolicy {
                allow_private: true,
                allow_hosts: vec!["127.0.0.1".into()],
                deny_hosts: vec![deny.into()],
            };
            for url in spellings {
                assert_eq!(vet_code(&p, url), Some(ErrorCode::BlockedAddress), "deny {deny}: {url}");
            }
            // localhost. resolves (the system resolver) to loopback: refused too.
            assert_eq!(
                vet_code(&p, "http://localhost.:8080/"),
                Some(ErrorCode::BlockedAddress),
                "deny {deny}"
            );
        }
        // A deny with a port leaves the other ports of this host alone; public hosts are not
        // this host.
        let p = NetworkPolicy {
            allow_private: true,
            deny_hosts: vec!["127.0.0.1:8080".into()],
            ..Default::default()
        };
        assert_eq!(vet_code(&p, "http://0.0.0.0:8081/"), None);
        let p = NetworkPolicy { deny_hosts: vec!["127.0.0.1".into()], ..Default::default() };
        assert_eq!(vet_code(&p, "http://93.184.216.34/"), None);
        // Without any deny entry, the unspecified addresses are refused as private, and an allowed
        // loopback address opens the unspecified one of its family (it connects there).
        assert_eq!(
            vet_code(&NetworkPolicy::default(), "http://0.0.0.0:8080/"),
            Some(ErrorCode::BlockedAddress)
        );
        assert_eq!(vet_code(&NetworkPolicy::default(), "http://[::]:8080/"), Some(ErrorCode::BlockedAddress));
        let p = NetworkPolicy { allow_hosts: vec!["127.0.0.1:8080".into()], ..Default::default() };
        assert_eq!(vet_code(&p, "http://0.0.0.0:8080/"), None);
        assert_eq!(vet_code(&p, "http://[::]:8080/"), Some(ErrorCode::BlockedAddress));
    }
}
