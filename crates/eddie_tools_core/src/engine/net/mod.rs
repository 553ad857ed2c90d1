//! The network engine (feature `net`), shared by every family that reaches the network (`web`,
//! `git` over http(s), `browser`): [`guard`] decides what may be reached, [`client`] reaches it
//! with the connection pinned to the vetted addresses and every redirect vetted again, and
//! `proxy` (with `browser`) carries the browser's requests through the guard.

pub mod client;
pub mod decode;
mod direct;
pub mod guard;
#[cfg(feature = "browser")]
pub mod proxy;

pub use client::{Hop, Request, Response, bounded, send};
pub use guard::{Guard, Resolver, SystemResolver, classify, parse_url, policy_of};
