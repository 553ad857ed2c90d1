//! The network engine, shared by every tool that reaches the network (the `web` family, and
//! the browser family later): [`guard`] decides what may be reached, [`client`] reaches it
//! with the connection pinned to the vetted addresses and every redirect vetted again.

pub mod client;
pub mod decode;
pub mod guard;
#[cfg(feature = "browser")]
pub mod proxy;

pub use client::{Hop, Request, Response, bounded, send};
pub use guard::{Guard, Resolver, SystemResolver, classify, env_lookup, parse_url, policy_of};
