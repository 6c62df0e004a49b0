//! The operators' HTTP port (`metrics-port`, off by default; `metrics-bind`):
//! `/metrics` in the Prometheus text format, the status page at `/` and
//! the JSON it polls at `/status.json`.
//!
//! hyper serves the port on the server's tokio runtime; a request only
//! parses and writes there. Gathering the figures (INFO's text, RocksDB's
//! properties and file metadata, the command table's counters) runs on
//! tokio's blocking pool, never on a worker thread that serves Redis
//! clients, so a slow scrape cannot delay a command.
//!
//! `/metrics` has two parts: the families `redis_exporter` derives from
//! INFO, under its names (exporter.rs), and Firn's own (`firn_*`,
//! firn.rs).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;

use crate::server::Server;

pub mod exporter;
pub mod firn;
pub mod histogram;
pub mod status;
pub mod text;

/// The whole `/metrics` page.
pub fn render(server: &Server) -> String {
    let mut page = text::Page::default();
    exporter::render(server, &mut page);
    let figures = firn::figures(server);
    firn::render(server, &figures, &mut page);
    page.finish()
}

/// Binds `metrics-bind`:`metrics-port` when the port is set, and serves it
/// until the process ends.
pub async fn start(server: Arc<Server>) -> Result<(), String> {
    let (bind, port) = {
        let config = server.config();
        (config.metrics_bind.clone(), config.metrics_port)
    };
    if port == 0 {
        return Ok(());
    }
    let listener = TcpListener::bind((bind.as_str(), port))
        .await
        .map_err(|e| format!("cannot listen for metrics on {bind}:{port}: {e}"))?;
    tracing::info!(%bind, port, "metrics and status page listening");
    tokio::spawn(accept_loop(server, listener));
    Ok(())
}

async fn accept_loop(server: Arc<Server>, listener: TcpListener) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "metrics accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let server = server.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| respond(server.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(std::time::Duration::from_secs(10))
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

/// Runs `gather` on the blocking pool.
async fn off_thread(
    server: Arc<Server>,
    gather: impl FnOnce(&Server) -> String + Send + 'static,
) -> Option<String> {
    tokio::task::spawn_blocking(move || gather(&server))
        .await
        .ok()
}

async fn respond(
    server: Arc<Server>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return Ok(reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "only GET\n",
        ));
    }
    let response = match req.uri().path() {
        "/metrics" => match off_thread(server, render).await {
            Some(body) => reply(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                body,
            ),
            None => reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", ""),
        },
        "/status.json" => {
            let gathered = off_thread(server, |server| {
                let figures = firn::figures(server);
                status::json(server, &figures).to_string()
            })
            .await;
            match gathered {
                Some(body) => reply(StatusCode::OK, "application/json", body),
                None => reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", ""),
            }
        }
        "/" | "/index.html" => reply(
            StatusCode::OK,
            "text/html; charset=utf-8",
            Bytes::from_static(status::page().as_bytes()),
        ),
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    };
    Ok(response)
}
