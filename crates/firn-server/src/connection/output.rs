//! The output queue: encoded replies held until durable, then released
//! and written as fast as the socket takes them.

use bytes::{Buf, Bytes, BytesMut};
use std::collections::VecDeque;
use std::io::IoSlice;
use tokio::net::tcp::OwnedWriteHalf;

/// Segments handed to one vectored write.
const WRITE_SEGMENTS: usize = 64;

/// Encoded output not yet written: frozen segments (the first `released`
/// of which may be sent) followed by the tail still being appended to.
#[derive(Default)]
pub(super) struct OutputQueue {
    pub(super) segments: VecDeque<Bytes>,
    pub(super) released: usize,
    pub(super) tail: BytesMut,
    /// Bytes in `segments` plus `tail`.
    pub(super) len: usize,
}

impl OutputQueue {
    pub(super) fn push_tail(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Appends `bytes` by reference (big bulk payloads).
    pub(super) fn push_segment(&mut self, bytes: Bytes) {
        self.seal_tail();
        self.len += bytes.len();
        self.segments.push_back(bytes);
    }

    pub(super) fn seal_tail(&mut self) {
        if !self.tail.is_empty() {
            self.segments.push_back(self.tail.split().freeze());
        }
    }

    /// Everything queued so far may be sent.
    pub(super) fn release_all(&mut self) {
        self.seal_tail();
        self.released = self.segments.len();
    }

    /// Drops everything not released yet.
    pub(super) fn discard_held(&mut self) {
        self.len -= self.tail.len();
        self.tail.clear();
        while self.segments.len() > self.released {
            if let Some(dropped) = self.segments.pop_back() {
                self.len -= dropped.len();
            }
        }
    }

    pub(super) fn has_released(&self) -> bool {
        self.released > 0
    }

    /// Writes released bytes without waiting; returns how many were taken.
    pub(super) fn write_released(&mut self, writer: &OwnedWriteHalf) -> std::io::Result<usize> {
        self.consume_released(|slices| writer.try_write_vectored(slices))
    }

    /// Hands up to [`WRITE_SEGMENTS`] released segments to `take` (a
    /// socket's vectored write, or a TLS session's) and drops the bytes it
    /// says it took.
    pub(super) fn consume_released(
        &mut self,
        take: impl FnOnce(&[IoSlice<'_>]) -> std::io::Result<usize>,
    ) -> std::io::Result<usize> {
        let slices: Vec<IoSlice<'_>> = self
            .segments
            .iter()
            .take(self.released.min(WRITE_SEGMENTS))
            .map(|s| IoSlice::new(s))
            .collect();
        let mut written = take(&slices)?;
        let total = written;
        while written > 0 {
            let Some(front) = self.segments.front_mut() else {
                break;
            };
            if written < front.len() {
                front.advance(written);
                break;
            }
            written -= front.len();
            self.segments.pop_front();
            self.released -= 1;
        }
        self.len -= total;
        Ok(total)
    }
}
