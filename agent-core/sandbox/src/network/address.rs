//! The addresses behind a name, and the ranges no name may lead a sandboxed command to unless an
//! allowed entry names it exactly: the host's loopback (where the user's own services listen),
//! private and shared ranges (the user's network), link-local (the cloud metadata service at
//! 169.254.169.254 and its IPv6 twin), multicast and reserved space. An IPv4 address inside an
//! IPv6 one is judged as the IPv4 address.
//!
//! The proxy resolves names itself (commands have no resolver): `localhost` and `*.localhost`
//! are the loopback (RFC 6761), anything else goes to the system's resolver. A test build may
//! replace the ranges ([`REFUSED_ENV`]) and add names of its own ([`HOSTS_ENV`]) so tests can
//! play private addresses on the loopback; a release build reads neither.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::OnceLock;

/// Comma-separated CIDR ranges that replace the refused ones (test builds only).
pub const REFUSED_ENV: &str = "LARIK_SANDBOX_REFUSED_ADDRESSES";
/// Comma-separated `name=address` pairs the proxy resolves itself (test builds only).
pub const HOSTS_ENV: &str = "LARIK_SANDBOX_HOSTS";

const REFUSED: &[&str] = &[
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "::/128",
    "::1/128",
    "fc00::/7",
    "fe80::/10",
    "ff00::/8",
];

/// An address range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    base: IpAddr,
    prefix: u8,
}

impl Range {
    pub fn parse(text: &str) -> Option<Range> {
        let (base, prefix) = match text.trim().split_once('/') {
            Some((base, prefix)) => (base.parse::<IpAddr>().ok()?, prefix.parse::<u8>().ok()?),
            None => {
                let base = text.trim().parse::<IpAddr>().ok()?;
                (base, if base.is_ipv4() { 32 } else { 128 })
            }
        };
        let bits = if base.is_ipv4() { 32 } else { 128 };
        (prefix <= bits).then_some(Range { base, prefix })
    }

    pub fn contains(&self, address: IpAddr) -> bool {
        let mask = |bits: u32| if self.prefix == 0 { 0 } else { u128::MAX << (bits - u32::from(self.prefix)) };
        match (self.base, address) {
            (IpAddr::V4(base), IpAddr::V4(address)) => {
                let mask = mask(32);
                (u128::from(u32::from(base)) & mask) == (u128::from(u32::from(address)) & mask)
            }
            (IpAddr::V6(base), IpAddr::V6(address)) => {
                let mask = mask(128);
                (u128::from(base) & mask) == (u128::from(address) & mask)
            }
            _ => false,
        }
    }
}

/// The ranges refused: the built-in list, or in a test build the environment's.
pub fn refused_ranges() -> &'static [Range] {
    static RANGES: OnceLock<Vec<Range>> = OnceLock::new();
    RANGES.get_or_init(|| match test_setting(REFUSED_ENV) {
        Some(list) => list.split(',').filter_map(Range::parse).collect(),
        None => REFUSED.iter().filter_map(|range| Range::parse(range)).collect(),
    })
}

fn test_setting(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|_| cfg!(debug_assertions))
}

/// Whether `address` lies in a refused range (an IPv4 address inside IPv6 judged as IPv4).
pub fn is_refused(address: IpAddr) -> bool {
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    refused_ranges().iter().any(|range| range.contains(address))
}

/// The address `host` spells, when it is one: dotted or bracketless IPv6, and the other
/// spellings resolvers accept for IPv4 (`2130706433`, `0x7f.1`), which are refused as such.
pub fn literal(host: &str) -> Option<Literal> {
    if let Ok(address) = host.parse::<IpAddr>() {
        return Some(Literal::Address(address));
    }
    let last = host.rsplit('.').next().unwrap_or(host);
    let numeric = |label: &str| {
        !label.is_empty()
            && (label.bytes().all(|byte| byte.is_ascii_digit())
                || label.strip_prefix("0x").is_some_and(|hex| hex.bytes().all(|byte| byte.is_ascii_hexdigit())))
    };
    numeric(last).then_some(Literal::OtherSpelling)
}

/// An address written in place of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    Address(IpAddr),
    /// A number no domain ends with: an IPv4 address in another notation.
    OtherSpelling,
}

/// The addresses of `host`, resolved as the proxy does.
pub async fn resolve(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    if let Some(address) = test_host(host) {
        return Ok(vec![SocketAddr::new(address, port)]);
    }
    if host == "localhost" || host.ends_with(".localhost") {
        return Ok(vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)]);
    }
    if let Some(Literal::Address(address)) = literal(host) {
        return Ok(vec![SocketAddr::new(address, port)]);
    }
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port)).await?.collect();
    if found.is_empty() {
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "the name has no address"));
    }
    Ok(found)
}

fn test_host(host: &str) -> Option<IpAddr> {
    let list = test_setting(HOSTS_ENV)?;
    list.split(',').filter_map(|pair| pair.split_once('=')).find(|(name, _)| *name == host)?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_metadata_addresses_are_refused() {
        for refused in ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "::1", "fd00:ec2::254"]
        {
            assert!(is_refused(refused.parse().unwrap()), "{refused}");
        }
        assert!(is_refused("::ffff:169.254.169.254".parse().unwrap()), "an IPv4 address inside IPv6");
        for public in ["93.184.216.34", "2606:2800:220:1::1", "172.32.0.1"] {
            assert!(!is_refused(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn other_spellings_of_addresses_are_literals() {
        assert_eq!(literal("127.0.0.1"), Some(Literal::Address("127.0.0.1".parse().unwrap())));
        assert_eq!(literal("2130706433"), Some(Literal::OtherSpelling));
        assert_eq!(literal("0x7f.1"), Some(Literal::OtherSpelling));
        assert_eq!(literal("1.2.3.0x4"), Some(Literal::OtherSpelling));
        assert_eq!(literal("registry.example.org"), None);
        assert_eq!(literal("a1.example.com"), None);
        assert!(Range::parse("10.0.0.0/33").is_none() && Range::parse("x/8").is_none());
        assert!(Range::parse("127.0.0.2").unwrap().contains("127.0.0.2".parse().unwrap()));
    }
}
