//! Delivery of messages to subscribed connections: PUBLISH, SPUBLISH and
//! the invalidations of client-side caching go through a client's
//! mailbox here, under the `client-output-buffer-limit pubsub` the server
//! is configured with.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use firn_resp::Reply;

use super::state::Mailbox;
use crate::config::OutputLimit;
use crate::server::{ClientInfo, Server};

/// PUBLISH: delivers `message` to the subscribers of `channel` (`message`)
/// and of every pattern matching it (`pmessage`), in that order as Redis
/// does; returns how many deliveries were made. Costs one atomic load
/// when nobody is subscribed to anything; never waits.
pub fn publish(server: &Server, channel: &[u8], message: &[u8]) -> usize {
    if server.pubsub.is_idle() {
        return 0;
    }
    let limit = server.config().client_output_buffer_limit.pubsub;
    let to = |client: &ClientInfo, reply: &Arc<Reply>, bytes| {
        deliver(client, reply, bytes, limit, false)
    };
    server.pubsub.publish_with(channel, message, to)
}

/// SPUBLISH: delivers `smessage` to the subscribers of a shard channel.
pub fn spublish(server: &Server, channel: &[u8], message: &[u8]) -> usize {
    if server.pubsub.is_idle() {
        return 0;
    }
    let limit = server.config().client_output_buffer_limit.pubsub;
    let to = |client: &ClientInfo, reply: &Arc<Reply>, bytes| {
        deliver(client, reply, bytes, limit, false)
    };
    server.pubsub.spublish_with(channel, message, to)
}

/// Queues a server-initiated message for a client, wakes its connection,
/// and closes the client if its unsent output passes the pub/sub output
/// limit (Redis's checkClientOutputBufferLimits for the pubsub class).
/// Also used for tracking invalidations.
pub fn deliver(
    client: &ClientInfo,
    message: &Arc<Reply>,
    bytes: u64,
    limit: OutputLimit,
    after_reply: bool,
) {
    if client.killed.load(Ordering::Acquire) {
        return;
    }
    let mailbox = &client.pubsub.mailbox;
    let queued = mailbox.push(message.clone(), bytes, after_reply);
    let unsent = queued + client.output_bytes.load(Ordering::Relaxed);
    if over_limit(mailbox, unsent, limit) {
        tracing::warn!(
            client = client.id,
            addr = %client.addr,
            unsent_bytes = unsent,
            "client scheduled to be closed ASAP for overcoming of output buffer limits"
        );
        client.request_kill();
        mailbox.take();
        return;
    }
    mailbox.notify.notify_one();
}

fn over_limit(mailbox: &Mailbox, unsent: u64, limit: OutputLimit) -> bool {
    if limit.hard_bytes > 0 && unsent > limit.hard_bytes {
        return true;
    }
    if limit.soft_bytes == 0 || unsent <= limit.soft_bytes {
        return false;
    }
    let now = firn_storage::now_ms().max(1);
    match mailbox
        .over_soft_since_ms
        .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed)
    {
        Ok(_) => false,
        Err(since) => now.saturating_sub(since) > limit.soft_seconds * 1000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_limit_needs_its_seconds_hard_limit_is_immediate() {
        let mailbox = Mailbox::default();
        let limit = OutputLimit {
            hard_bytes: 100,
            soft_bytes: 50,
            soft_seconds: 60,
        };
        assert!(!over_limit(&mailbox, 40, limit));
        assert!(!over_limit(&mailbox, 60, limit), "the soft timer starts");
        assert!(!over_limit(&mailbox, 60, limit), "60 s have not passed");
        assert!(over_limit(&mailbox, 101, limit));
        let instant = OutputLimit {
            soft_seconds: 0,
            ..limit
        };
        mailbox
            .over_soft_since_ms
            .store(firn_storage::now_ms() - 5, Ordering::Relaxed);
        assert!(over_limit(&mailbox, 60, instant));
    }
}
