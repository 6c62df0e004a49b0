//! Listening sockets: the `bind` addresses on a port, as Redis reads them
//! (`-addr` may be unavailable and is then skipped with a warning; `*` and
//! `::*` are every IPv4 and IPv6 address). Start-up binds `port` and
//! `tls-port`; CONFIG SET tls-port binds the new port before the old one
//! is closed (tls/).

use std::net::{SocketAddr, TcpListener};

/// Listening, non-blocking sockets on every `bind` address at `port`.
pub fn bind_all(binds: &[String], port: u16, backlog: u32) -> Result<Vec<TcpListener>, String> {
    let mut listeners = Vec::new();
    for given in binds {
        let optional = given.starts_with('-');
        let addr = match given.trim_start_matches('-') {
            "*" => "0.0.0.0",
            "::*" => "::",
            addr => addr,
        };
        let ip: std::net::IpAddr = addr
            .parse()
            .map_err(|_| format!("invalid bind address '{addr}'"))?;
        let sock_addr = SocketAddr::new(ip, port);
        match listen_on(sock_addr, backlog) {
            Ok(listener) => listeners.push(listener),
            Err(e) if optional => {
                tracing::warn!("could not bind {sock_addr} (optional, skipped): {e}");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(listeners)
}

/// A listening socket on `sock_addr`.
fn listen_on(sock_addr: SocketAddr, backlog: u32) -> Result<TcpListener, String> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(sock_addr),
        socket2::Type::STREAM,
        None,
    )
    .map_err(|e| e.to_string())?;
    socket.set_reuse_address(true).map_err(|e| e.to_string())?;
    if sock_addr.is_ipv6() {
        let _ = socket.set_only_v6(true);
    }
    socket
        .bind(&sock_addr.into())
        .map_err(|e| format!("could not bind {sock_addr}: {e}"))?;
    socket.listen(backlog as i32).map_err(|e| e.to_string())?;
    socket.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok(socket.into())
}
