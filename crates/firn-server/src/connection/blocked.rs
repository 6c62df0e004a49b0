//! A blocking command's wait on its connection: no thread, no lock, the
//! socket still served (see `blocking/state.rs`).

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{sleep_until, Connection, READ_BYTES};
use crate::blocking::state::{Registration, Unblocked};
use crate::command_table::Flags;
use crate::commands::Command;
use crate::commands::Deferred;
use crate::exec::{execute_again, Executed};
use crate::pipeline::{reply_mode_pass, BlockedCall, Flow};
use tokio::io::AsyncReadExt;

/// How a blocked command's wait ended.
enum Waited {
    Served(Executed),
    TimedOut,
    Unblocked(Unblocked),
    /// The client went away or must go (EOF, kill, a limit, shutdown).
    Gone,
}

/// What woke a blocked command's wait.
enum BlockedWoke {
    /// Run the command again (after any CLIENT PAUSE of writes).
    Retry,
    /// One of its keys may have changed, or CLIENT UNBLOCK.
    Signal,
    Timeout,
    Read(std::io::Result<usize>),
    Writable(std::io::Result<()>),
    /// A pub/sub message or invalidation (a RESP3 client may be both
    /// subscribed and blocked): sent while it waits, as in Redis.
    Message,
    Stop,
}

/// CLIENT UNBLOCK ... ERROR's reply to the blocked client.
const UNBLOCKED_ERROR: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

impl Connection {
    /// A blocking command found nothing to serve: wait for its keys without
    /// a thread or a lock (blocking/state.rs), then reply as the command would
    /// have. Meanwhile the replies before it go out, and a client that
    /// closes, CLIENT KILL and shutdown end the wait and leave no waiter.
    pub(super) async fn block(&mut self, args: &[Bytes], call: BlockedCall) -> Flow {
        let BlockedCall {
            on,
            started,
            registration,
        } = call;
        let server = self.server.clone();
        let Ok(cmd) = crate::commands::registry().lookup(args) else {
            return Flow::Drop;
        };
        let micros = started.elapsed().as_micros() as u64;
        let deadline = (on.timeout_ms > 0).then(|| {
            started
                .checked_add(Duration::from_millis(on.timeout_ms))
                .unwrap_or(started + Duration::from_secs(100 * 365 * 86400))
        });
        if self.wait_durable().await.is_err() || self.write_ready().is_err() {
            return Flow::Drop;
        }
        // Registered under the keys' locks by its first run (exec.rs), so
        // that a command read after it found it blocked; a body that took
        // every lock registers here and runs once more first, since a push
        // may have come in between.
        let (registration, retry) = match registration {
            Some(registration) => (registration, false),
            None => (
                server.blocking.register(
                    self.client.id,
                    self.session.db,
                    &on,
                    cmd.lock_keys(args, self.session.db),
                    || Some(server.engine.listen_submits()),
                ),
                true,
            ),
        };
        self.client.blocked.store(true, Ordering::Release);
        let rerun = on.rerun.as_deref().unwrap_or(args);
        let waited = self
            .wait_for_keys(cmd, rerun, &registration, deadline, retry)
            .await;
        self.client.blocked.store(false, Ordering::Release);
        let unblocked = matches!(waited, Waited::Unblocked(_));
        let reply = match waited {
            Waited::Served(executed) => {
                registration.served();
                self.awaiting.extend(executed.tickets);
                executed.reply
            }
            // Redis answers every timed-out list or sorted-set wait with a
            // null array, BLMOVE's too (its immediate null is a null bulk).
            Waited::TimedOut | Waited::Unblocked(Unblocked::Timeout) => Reply::NullArray,
            Waited::Unblocked(Unblocked::Error) => Reply::Error(UNBLOCKED_ERROR.into()),
            Waited::Gone => return Flow::Drop,
        };
        let mut call =
            crate::after_call::Call::new(&server, &self.client, cmd, args, self.session.db);
        call.unblocked = unblocked;
        crate::after_call::finished(&call, micros, Some(&reply));
        if let Reply::Error(text) = &reply {
            server.stats.count_error(text);
        }
        if let Some(reply) = reply_mode_pass(&mut self.session, reply) {
            self.push_reply(&reply);
        }
        Flow::Continue
    }

    /// Waits until the blocked command is served, times out or must end;
    /// runs it again after every wake-up (and at once with `retry`).
    async fn wait_for_keys(
        &mut self,
        cmd: &Command,
        args: &[Bytes],
        registration: &Registration,
        deadline: Option<Instant>,
        mut retry: bool,
    ) -> Waited {
        let waiter = registration.waiter();
        loop {
            if self.client.killed.load(Ordering::Acquire) {
                return Waited::Gone;
            }
            if let Some(how) = waiter.unblocked() {
                return Waited::Unblocked(how);
            }
            let want_write = self.output.has_released();
            self.inbuf.reserve(READ_BYTES);
            let woke = tokio::select! {
                _ = self.server.pause.wait(|| cmd.has(Flags::WRITE)), if retry => BlockedWoke::Retry,
                _ = waiter.woken(), if !retry => BlockedWoke::Signal,
                _ = sleep_until(deadline), if deadline.is_some() => BlockedWoke::Timeout,
                read = self.reader.read_buf(&mut self.inbuf) => BlockedWoke::Read(read),
                ready = self.writer.writable(), if want_write => BlockedWoke::Writable(ready),
                _ = self.client.pubsub.mailbox.notify.notified() => BlockedWoke::Message,
                _ = self.client.kill.notified() => BlockedWoke::Stop,
                _ = crate::server::until_shutdown(&mut self.shutdown) => BlockedWoke::Stop,
            };
            match woke {
                BlockedWoke::Retry => {
                    let ready = waiter.take_wake();
                    *self.client.woken_keys.lock() = ready.clone();
                    let server = self.server.clone();
                    let reserved = waiter.start_run();
                    let executed = execute_again(
                        &server,
                        cmd,
                        args,
                        &mut self.session,
                        &self.client,
                        reserved,
                    )
                    .await;
                    waiter.ran();
                    if !matches!(executed.deferred, Some(Deferred::Block(_))) {
                        return Waited::Served(executed);
                    }
                    waiter.keep_ready(ready);
                    self.awaiting.extend(executed.tickets);
                    retry = false;
                }
                BlockedWoke::Signal => retry = true,
                BlockedWoke::Timeout => return Waited::TimedOut,
                // Requests sent meanwhile wait in the buffer, as in Redis.
                BlockedWoke::Read(Ok(n)) if n > 0 => {
                    self.note_input(n);
                    if self.query_buffer_over_limit() {
                        return Waited::Gone;
                    }
                }
                BlockedWoke::Writable(Ok(())) => {
                    if self.write_ready().is_err() {
                        return Waited::Gone;
                    }
                }
                BlockedWoke::Message => {
                    self.deliver_messages();
                    if self.awaiting.is_empty() {
                        self.output.release_all();
                    }
                    if self.write_ready().is_err() || self.output_over_limit() {
                        return Waited::Gone;
                    }
                }
                BlockedWoke::Read(_) | BlockedWoke::Writable(Err(_)) | BlockedWoke::Stop => {
                    return Waited::Gone
                }
            }
        }
    }
}
