//! The SOCKS5 side of the proxy (RFC 1928): no authentication, `CONNECT` only. A request for a
//! name (`socks5h://`, what `ALL_PROXY` says) is decided by that name; a request for an address
//! is decided as an address, which the rules refuse unless an entry names it.

use std::net::{Ipv4Addr, Ipv6Addr};

use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::proxy::{Gate, Refusal};

pub(super) const VERSION: u8 = 5;
const NO_AUTHENTICATION: u8 = 0;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;
const CONNECT: u8 = 1;
const SUCCEEDED: u8 = 0;
const NOT_ALLOWED: u8 = 2;
const HOST_UNREACHABLE: u8 = 4;
const COMMAND_NOT_SUPPORTED: u8 = 7;
const ADDRESS_NOT_SUPPORTED: u8 = 8;

pub(super) async fn serve(mut client: BufReader<TcpStream>, gate: &Gate) -> std::io::Result<()> {
    match handshake(&mut client, gate).await? {
        Some(upstream) => gate.carry(client, upstream).await,
        None => Ok(()),
    }
}

/// The greeting and the request: the connection made, or `None` once the refusal is said.
async fn handshake(client: &mut BufReader<TcpStream>, gate: &Gate) -> std::io::Result<Option<TcpStream>> {
    let [_, count] = read_array::<2>(client).await?;
    let mut methods = vec![0; usize::from(count)];
    client.read_exact(&mut methods).await?;
    if !methods.contains(&NO_AUTHENTICATION) {
        client.get_mut().write_all(&[VERSION, NO_ACCEPTABLE_METHOD]).await?;
        return Ok(None);
    }
    client.get_mut().write_all(&[VERSION, NO_AUTHENTICATION]).await?;
    let [version, command, _, kind] = read_array::<4>(client).await?;
    if version != VERSION {
        return Ok(None);
    }
    let host = match kind {
        1 => Ipv4Addr::from(read_array::<4>(client).await?).to_string(),
        3 => {
            let [length] = read_array::<1>(client).await?;
            let mut name = vec![0; usize::from(length)];
            client.read_exact(&mut name).await?;
            match String::from_utf8(name) {
                Ok(name) => name,
                Err(_) => return reply(client, ADDRESS_NOT_SUPPORTED).await.map(|()| None),
            }
        }
        4 => Ipv6Addr::from(read_array::<16>(client).await?).to_string(),
        _ => return reply(client, ADDRESS_NOT_SUPPORTED).await.map(|()| None),
    };
    let port = u16::from_be_bytes(read_array::<2>(client).await?);
    if command != CONNECT {
        return reply(client, COMMAND_NOT_SUPPORTED).await.map(|()| None);
    }
    let code = match gate.open(&host, port).await {
        Ok(upstream) => {
            reply(client, SUCCEEDED).await?;
            return Ok(Some(upstream));
        }
        Err(Refusal::Refused(_)) => NOT_ALLOWED,
        Err(Refusal::Unreachable(_)) => HOST_UNREACHABLE,
    };
    reply(client, code).await.map(|()| None)
}

async fn read_array<const N: usize>(client: &mut BufReader<TcpStream>) -> std::io::Result<[u8; N]> {
    let mut bytes = [0; N];
    client.read_exact(&mut bytes).await?;
    Ok(bytes)
}

/// The reply, with an unspecified bound address (clients do not use it for CONNECT).
async fn reply(client: &mut (impl AsyncWrite + Unpin), code: u8) -> std::io::Result<()> {
    client.write_all(&[VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}
