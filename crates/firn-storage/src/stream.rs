//! Streams, entry by entry, with their consumer groups (records and
//! layout: stream_meta.rs).
//!
//! A command reads the [`StreamMeta`] once, changes records through these
//! methods, and stores the meta record back with [`Txn::save_stream`]. A
//! stream stays when its last entry goes (Redis keeps an empty stream), so
//! unlike other collections it is saved whatever its length; deleting the
//! key is O(1) as for every type (its records are the compaction filter's).
//!
//! Costs: XADD reads the meta record and the tail node and writes the
//! entry, the node and the meta record. A range walks only the entries it
//! returns. XDEL finds an entry's node by one reverse seek. Trimming walks
//! the nodes and entries it removes. Each pending-list operation is a point
//! read and write of the pending entry, its consumer's index entry and the
//! consumer record.

use bytes::Bytes;
use std::ops::Bound;

use crate::error::{Result, StorageError};
use crate::meta::ValueType;
use crate::stream_meta::{
    consumer_pending_prefix, decode_fields, encode_fields, member, AppendError, PendingEntry,
    StreamConsumer, StreamEntry, StreamGroup, StreamId, StreamMeta, StreamNode, Trim, CONSUMER,
    ENTRY, GROUP, NODE, PENDING, STREAM_LISTPACK_MAX_SIZE,
};
use crate::txn::Txn;
use crate::Cf;

impl Txn<'_> {
    /// The stream at `key`: `None` if missing, `WrongType` for another type.
    pub fn stream(&mut self, db: u8, key: &[u8]) -> Result<Option<StreamMeta>> {
        match self.collection(db, key, ValueType::Stream)? {
            Some(coll) => StreamMeta::from_collection(coll).map(Some),
            None => Ok(None),
        }
    }

    /// A new empty stream (fresh version), stored by [`Txn::save_stream`].
    pub fn new_stream(&mut self) -> StreamMeta {
        StreamMeta::empty(self.new_collection(ValueType::Stream, StreamMeta::empty_extra()))
    }

    /// Stores the stream's meta record, empty or not.
    pub fn save_stream(&mut self, db: u8, key: &[u8], stream: &mut StreamMeta) -> Result<()> {
        stream.sync_record();
        self.write_meta(db, key, &stream.coll.to_meta())?;
        stream.coll.stored = true;
        Ok(())
    }

    /// Appends an entry with ID `id`, which the caller made greater than
    /// the last ID, to the tail node or a new one (streamAppendItem).
    pub fn stream_append(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &mut StreamMeta,
        id: StreamId,
        pairs: &[(Bytes, Bytes)],
    ) -> std::result::Result<Result<()>, AppendError> {
        if id <= stream.last_id {
            return Err(AppendError::NotAbove);
        }
        let raw_bytes: u64 = pairs.iter().map(|(f, v)| (f.len() + v.len()) as u64).sum();
        if raw_bytes > STREAM_LISTPACK_MAX_SIZE {
            return Err(AppendError::TooLarge);
        }
        Ok(self.append_entry(db, key, stream, id, pairs, raw_bytes))
    }

    fn append_entry(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &mut StreamMeta,
        id: StreamId,
        pairs: &[(Bytes, Bytes)],
        raw_bytes: u64,
    ) -> Result<()> {
        let limits = self.encoding_limits();
        let mut node = match stream.nodes {
            0 => None,
            _ => self.stream_node(db, key, stream, stream.tail)?,
        };
        if let Some(tail) = &node {
            let max_bytes = match limits.stream_node_max_bytes {
                0 => STREAM_LISTPACK_MAX_SIZE,
                n => n.min(STREAM_LISTPACK_MAX_SIZE),
            };
            let max_entries = limits.stream_node_max_entries;
            if tail.listpack_bytes() + raw_bytes >= max_bytes
                || (max_entries != 0 && tail.live + tail.deleted >= max_entries)
            {
                node = None;
            }
        }
        let mut node = match node {
            Some(node) => node,
            None => {
                stream.nodes += 1;
                stream.tail = id;
                StreamNode {
                    master: id,
                    live: 0,
                    deleted: 0,
                    last_id: id,
                    entries_bytes: 0,
                    master_fields: pairs.iter().map(|(f, _)| f.clone()).collect(),
                }
            }
        };
        node.entries_bytes += entry_bytes(&node, id, pairs);
        node.live += 1;
        node.last_id = id;
        self.put_stream_node(db, key, stream, &node);
        let member = member(ENTRY, &[&id.to_bytes()]);
        self.put_member(
            Cf::Stream,
            db,
            key,
            &stream.coll,
            &member,
            encode_fields(pairs),
        );
        stream.coll.size += 1;
        stream.entries_added += 1;
        stream.last_id = id;
        if stream.coll.size == 1 {
            stream.first_id = id;
        }
        Ok(())
    }

    /// The entry `id`, if it is live.
    pub fn stream_entry(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        id: StreamId,
    ) -> Result<Option<Vec<(Bytes, Bytes)>>> {
        let member = member(ENTRY, &[&id.to_bytes()]);
        match self.get_member(Cf::Stream, db, key, &stream.coll, &member)? {
            Some(raw) => decode_fields(&raw).map(Some),
            None => Ok(None),
        }
    }

    /// Visits the live entries with IDs in `[start, end]`, ascending or
    /// (`rev`) descending, until `visit` returns false.
    #[allow(clippy::too_many_arguments)]
    pub fn stream_range(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        start: StreamId,
        end: StreamId,
        rev: bool,
        mut visit: impl FnMut(StreamId, Vec<(Bytes, Bytes)>) -> bool,
    ) -> Result<()> {
        if start > end || stream.is_empty() {
            return Ok(());
        }
        // Nothing lives before the first entry: seek there, past the
        // deleted entries' tombstones.
        let start = start.max(stream.first_id);
        let from = member(ENTRY, &[&start.to_bytes()]);
        let to = member(ENTRY, &[&end.to_bytes()]);
        self.scan_stream(
            db,
            key,
            stream,
            (Bound::Included(&from), Bound::Included(&to)),
            rev,
            |m, v| Ok((StreamId::from_bytes(&m[1..])?, decode_fields(v)?)),
            |(id, pairs)| visit(id, pairs),
        )
    }

    /// Up to `count` entries (0: all) from [`Txn::stream_range`].
    #[allow(clippy::too_many_arguments)]
    pub fn stream_entries(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        start: StreamId,
        end: StreamId,
        rev: bool,
        count: u64,
    ) -> Result<Vec<StreamEntry>> {
        let mut out = Vec::new();
        self.stream_range(db, key, stream, start, end, rev, |id, pairs| {
            out.push((id, pairs));
            count == 0 || (out.len() as u64) < count
        })?;
        Ok(out)
    }

    /// The first (or `last`) live entry's ID.
    pub fn stream_edge(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        last: bool,
    ) -> Result<Option<StreamId>> {
        let mut found = None;
        let (start, end) = match last {
            false => (stream.first_id, StreamId::MAX),
            true => (StreamId::MIN, stream.last_id),
        };
        let from = member(ENTRY, &[&start.to_bytes()]);
        let to = member(ENTRY, &[&end.to_bytes()]);
        self.scan_stream(
            db,
            key,
            stream,
            (Bound::Included(&from), Bound::Included(&to)),
            last,
            |m, _| StreamId::from_bytes(&m[1..]),
            |id| {
                found = Some(id);
                false
            },
        )?;
        Ok(found)
    }

    /// Deletes entry `id` (XDEL); true if it was live. A node left with no
    /// live entry goes, as in Redis. The caller keeps `first_id` and
    /// `max_deleted_id` in step.
    pub fn stream_delete(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &mut StreamMeta,
        id: StreamId,
    ) -> Result<bool> {
        let entry = member(ENTRY, &[&id.to_bytes()]);
        if self
            .get_member(Cf::Stream, db, key, &stream.coll, &entry)?
            .is_none()
        {
            return Ok(false);
        }
        self.delete_member(Cf::Stream, db, key, &stream.coll, &entry);
        stream.coll.size = stream.coll.size.saturating_sub(1);
        let Some(mut node) = self.stream_node_at_or_before(db, key, stream, id)? else {
            return Err(StorageError::Corrupt("stream entry outside any node"));
        };
        if node.live <= 1 {
            self.remove_stream_node(db, key, stream, &node)?;
        } else {
            node.live = node.live.saturating_sub(1);
            node.deleted += 1;
            self.put_stream_node(db, key, stream, &node);
        }
        Ok(true)
    }

    /// Trims from the head (streamTrim): whole nodes while they may all
    /// go, then, unless `approx`, entries of the first node left. `limit`
    /// (0: none) caps the entries removed, node by node. Returns how many
    /// entries went; the caller saves the meta record.
    #[allow(clippy::too_many_arguments)]
    pub fn stream_trim(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &mut StreamMeta,
        trim: Trim,
        approx: bool,
        limit: u64,
    ) -> Result<u64> {
        let mut deleted = 0u64;
        let mut after: Option<StreamId> = None;
        loop {
            if let Trim::MaxLen(max) = trim {
                if stream.len() <= max {
                    break;
                }
            }
            let Some(mut node) = self.stream_node_after(db, key, stream, after)? else {
                break;
            };
            after = Some(node.master);
            if limit != 0 && deleted + node.live > limit {
                break;
            }
            let whole = match trim {
                Trim::MaxLen(max) => stream.len().saturating_sub(node.live) >= max,
                Trim::MinId(min) => node.last_id < min,
            };
            if whole {
                let ids = self.node_entry_ids(db, key, stream, &node, node.last_id, u64::MAX)?;
                self.delete_entries(db, key, stream, &ids);
                deleted += node.live;
                self.remove_stream_node(db, key, stream, &node)?;
                continue;
            }
            if approx {
                break;
            }
            let (wanted, below) = match trim {
                Trim::MaxLen(max) => (stream.len() - max, node.last_id),
                Trim::MinId(min) => match min.prev() {
                    Some(before) => (u64::MAX, before.min(node.last_id)),
                    None => (0, node.last_id),
                },
            };
            let ids = self.node_entry_ids(db, key, stream, &node, below, wanted)?;
            self.delete_entries(db, key, stream, &ids);
            let n = ids.len() as u64;
            deleted += n;
            node.live = node.live.saturating_sub(n);
            node.deleted += n;
            self.put_stream_node(db, key, stream, &node);
            break;
        }
        if stream.is_empty() {
            stream.first_id = StreamId::MIN;
        } else if deleted > 0 {
            stream.first_id = self
                .stream_edge(db, key, stream, false)?
                .unwrap_or_default();
        }
        Ok(deleted)
    }

    /// The live entries of `node` from its start up to `last`, at most
    /// `count`.
    #[allow(clippy::too_many_arguments)]
    fn node_entry_ids(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        node: &StreamNode,
        last: StreamId,
        count: u64,
    ) -> Result<Vec<StreamId>> {
        let mut ids = Vec::new();
        if count == 0 || node.live == 0 || last < node.master {
            return Ok(ids);
        }
        let from = member(ENTRY, &[&node.master.max(stream.first_id).to_bytes()]);
        let to = member(ENTRY, &[&last.to_bytes()]);
        self.scan_stream(
            db,
            key,
            stream,
            (Bound::Included(&from), Bound::Included(&to)),
            false,
            |m, _| StreamId::from_bytes(&m[1..]),
            |id| {
                ids.push(id);
                (ids.len() as u64) < count
            },
        )?;
        Ok(ids)
    }

    fn delete_entries(&mut self, db: u8, key: &[u8], stream: &mut StreamMeta, ids: &[StreamId]) {
        for id in ids {
            let entry = member(ENTRY, &[&id.to_bytes()]);
            self.delete_member(Cf::Stream, db, key, &stream.coll, &entry);
        }
        stream.coll.size = stream.coll.size.saturating_sub(ids.len() as u64);
    }

    /// Visits the nodes in order (XINFO, DUMP's layout), until `visit`
    /// returns false.
    pub fn stream_nodes(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        mut visit: impl FnMut(&StreamNode) -> bool,
    ) -> Result<()> {
        let mut after = None;
        while let Some(node) = self.stream_node_after(db, key, stream, after)? {
            if !visit(&node) {
                break;
            }
            after = Some(node.master);
        }
        Ok(())
    }

    fn stream_node(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        master: StreamId,
    ) -> Result<Option<StreamNode>> {
        let m = member(NODE, &[&master.to_bytes()]);
        match self.get_member(Cf::Stream, db, key, &stream.coll, &m)? {
            Some(raw) => StreamNode::decode(master, &raw).map(Some),
            None => Ok(None),
        }
    }

    /// The first node after `after` (the first of all for `None`).
    fn stream_node_after(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        after: Option<StreamId>,
    ) -> Result<Option<StreamNode>> {
        let from = match after {
            Some(id) => member(NODE, &[&id.to_bytes(), &[0]]),
            None => vec![NODE],
        };
        self.first_node(db, key, stream, Bound::Included(&from), false)
    }

    /// The node whose master is `id` or the closest before it.
    fn stream_node_at_or_before(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        id: StreamId,
    ) -> Result<Option<StreamNode>> {
        let to = member(NODE, &[&id.to_bytes()]);
        self.first_node(db, key, stream, Bound::Included(&to), true)
    }

    fn first_node(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        bound: Bound<&[u8]>,
        rev: bool,
    ) -> Result<Option<StreamNode>> {
        let (lo, hi) = ([NODE], [NODE + 1]);
        let (from, to) = match rev {
            false => (bound, Bound::Excluded(&hi[..])),
            true => (Bound::Included(&lo[..]), bound),
        };
        let mut found = None;
        self.scan_stream(
            db,
            key,
            stream,
            (from, to),
            rev,
            |m, v| StreamNode::decode(StreamId::from_bytes(&m[1..])?, v),
            |node| {
                found = Some(node);
                false
            },
        )?;
        Ok(found)
    }

    fn put_stream_node(&mut self, db: u8, key: &[u8], stream: &StreamMeta, node: &StreamNode) {
        let m = member(NODE, &[&node.master.to_bytes()]);
        self.put_member(Cf::Stream, db, key, &stream.coll, &m, node.encode());
    }

    /// Removes a node's record; the tail moves back when it was the tail.
    fn remove_stream_node(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &mut StreamMeta,
        node: &StreamNode,
    ) -> Result<()> {
        let m = member(NODE, &[&node.master.to_bytes()]);
        self.delete_member(Cf::Stream, db, key, &stream.coll, &m);
        stream.nodes = stream.nodes.saturating_sub(1);
        if stream.tail == node.master {
            stream.tail = match node.master.prev() {
                Some(before) => self
                    .stream_node_at_or_before(db, key, stream, before)?
                    .map_or(StreamId::MIN, |n| n.master),
                None => StreamId::MIN,
            };
        }
        Ok(())
    }

    // ---- consumer groups ----

    pub fn stream_group(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        name: &[u8],
    ) -> Result<Option<StreamGroup>> {
        let m = member(GROUP, &[name]);
        match self.get_member(Cf::Stream, db, key, &stream.coll, &m)? {
            Some(raw) => StreamGroup::decode(Bytes::copy_from_slice(name), &raw).map(Some),
            None => Ok(None),
        }
    }

    /// Creates group `name`; `None` if it exists.
    pub fn stream_create_group(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &mut StreamMeta,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<u64>,
    ) -> Result<Option<StreamGroup>> {
        if self.stream_group(db, key, stream, name)?.is_some() {
            return Ok(None);
        }
        stream.next_group += 1;
        stream.groups += 1;
        let group = StreamGroup {
            name: Bytes::copy_from_slice(name),
            number: stream.next_group,
            last_id,
            entries_read,
            pending: 0,
            consumers: 0,
        };
        self.save_group(db, key, stream, &group);
        Ok(Some(group))
    }

    pub fn save_group(&mut self, db: u8, key: &[u8], stream: &StreamMeta, group: &StreamGroup) {
        let m = member(GROUP, &[&group.name]);
        self.put_member(Cf::Stream, db, key, &stream.coll, &m, group.encode());
    }

    /// Removes a group with its pending list and consumers: O(its records).
    pub fn stream_destroy_group(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &mut StreamMeta,
        group: &StreamGroup,
    ) -> Result<()> {
        let number = group.number.to_be_bytes();
        for tag in [PENDING, CONSUMER, crate::stream_meta::CONSUMER_PENDING] {
            let prefix = member(tag, &[&number]);
            self.delete_prefixed(db, key, stream, &prefix)?;
        }
        let m = member(GROUP, &[&group.name]);
        self.delete_member(Cf::Stream, db, key, &stream.coll, &m);
        stream.groups = stream.groups.saturating_sub(1);
        Ok(())
    }

    fn delete_prefixed(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        prefix: &[u8],
    ) -> Result<()> {
        let mut members = Vec::new();
        self.scan_prefix(
            db,
            key,
            stream,
            prefix,
            |m, _| Ok(m.to_vec()),
            |m| {
                members.push(m);
                true
            },
        )?;
        for m in members {
            self.delete_member(Cf::Stream, db, key, &stream.coll, &m);
        }
        Ok(())
    }

    /// Visits the groups in name order.
    pub fn stream_groups(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
    ) -> Result<Vec<StreamGroup>> {
        if stream.groups == 0 {
            return Ok(Vec::new());
        }
        self.stream_records(db, key, stream, &[GROUP], |name, v| {
            StreamGroup::decode(Bytes::copy_from_slice(name), v)
        })
    }

    /// Every record whose member starts with `prefix`, decoded by `decode`
    /// from the rest of its member and its value.
    fn stream_records<T>(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        prefix: &[u8],
        decode: impl Fn(&[u8], &Bytes) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        let skip = prefix.len();
        self.scan_prefix(
            db,
            key,
            stream,
            prefix,
            |m, v| decode(&m[skip..], v),
            |r| {
                out.push(r);
                true
            },
        )?;
        Ok(out)
    }

    /// [`Txn::scan_stream`] over the members starting with `prefix`.
    fn scan_prefix<T>(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        prefix: &[u8],
        decode: impl Fn(&[u8], &Bytes) -> Result<T>,
        visit: impl FnMut(T) -> bool,
    ) -> Result<()> {
        let end = crate::keys::prefix_end(prefix);
        let to = match &end {
            Some(end) => Bound::Excluded(&end[..]),
            None => Bound::Unbounded,
        };
        let range = (Bound::Included(prefix), to);
        self.scan_stream(db, key, stream, range, false, decode, visit)
    }

    /// Visits the stream's records whose members lie in `range`, in order
    /// or (`rev`) the opposite, each decoded by `decode` from its member and
    /// value, until `visit` returns false; a record that does not decode is
    /// `Corrupt`.
    #[allow(clippy::too_many_arguments)]
    fn scan_stream<T>(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        rev: bool,
        decode: impl Fn(&[u8], &Bytes) -> Result<T>,
        mut visit: impl FnMut(T) -> bool,
    ) -> Result<()> {
        let mut failed = None;
        self.scan_members(
            Cf::Stream,
            db,
            key,
            &stream.coll,
            range.0,
            range.1,
            rev,
            |m, v| match decode(m, v) {
                Ok(record) => visit(record),
                Err(e) => {
                    failed = Some(e);
                    false
                }
            },
        )?;
        failed.map_or(Ok(()), Err)
    }

    pub fn stream_consumer(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        name: &[u8],
    ) -> Result<Option<StreamConsumer>> {
        let m = member(CONSUMER, &[&group.number.to_be_bytes(), name]);
        match self.get_member(Cf::Stream, db, key, &stream.coll, &m)? {
            Some(raw) => StreamConsumer::decode(Bytes::copy_from_slice(name), &raw).map(Some),
            None => Ok(None),
        }
    }

    pub fn save_consumer(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        consumer: &StreamConsumer,
    ) {
        let m = member(CONSUMER, &[&group.number.to_be_bytes(), &consumer.name]);
        self.put_member(Cf::Stream, db, key, &stream.coll, &m, consumer.encode());
    }

    /// Creates consumer `name` seen at `now_ms`; false if it exists.
    pub fn stream_create_consumer(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &mut StreamGroup,
        name: &[u8],
        now_ms: u64,
    ) -> Result<bool> {
        if self
            .stream_consumer(db, key, stream, group, name)?
            .is_some()
        {
            return Ok(false);
        }
        group.consumers += 1;
        let consumer = StreamConsumer {
            name: Bytes::copy_from_slice(name),
            seen_time_ms: now_ms,
            pending: 0,
        };
        self.save_consumer(db, key, stream, group, &consumer);
        Ok(true)
    }

    /// Looks consumer `name` up and marks it seen at `now_ms`
    /// (streamLookupConsumer), creating it if missing; true if created.
    pub fn stream_touch_consumer(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &mut StreamGroup,
        name: &[u8],
        now_ms: u64,
    ) -> Result<bool> {
        match self.stream_consumer(db, key, stream, group, name)? {
            Some(mut consumer) => {
                consumer.seen_time_ms = now_ms;
                self.save_consumer(db, key, stream, group, &consumer);
                Ok(false)
            }
            None => self.stream_create_consumer(db, key, stream, group, name, now_ms),
        }
    }

    /// Deletes a consumer and its pending entries; returns how many it had.
    pub fn stream_delete_consumer(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &mut StreamGroup,
        consumer: &StreamConsumer,
    ) -> Result<u64> {
        let ids = self.stream_consumer_pending(
            db,
            key,
            stream,
            group,
            &consumer.name,
            StreamId::MIN,
            StreamId::MAX,
            0,
        )?;
        let number = group.number.to_be_bytes();
        let index = consumer_pending_prefix(group.number, &consumer.name);
        for id in &ids {
            let id = id.to_bytes();
            self.delete_member(
                Cf::Stream,
                db,
                key,
                &stream.coll,
                &member(PENDING, &[&number, &id]),
            );
            let mut q = index.clone();
            q.extend_from_slice(&id);
            self.delete_member(Cf::Stream, db, key, &stream.coll, &q);
        }
        group.pending = group.pending.saturating_sub(ids.len() as u64);
        group.consumers = group.consumers.saturating_sub(1);
        let m = member(CONSUMER, &[&number, &consumer.name]);
        self.delete_member(Cf::Stream, db, key, &stream.coll, &m);
        Ok(ids.len() as u64)
    }

    /// The group's consumers in name order.
    pub fn stream_consumers(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
    ) -> Result<Vec<StreamConsumer>> {
        let prefix = member(CONSUMER, &[&group.number.to_be_bytes()]);
        self.stream_records(db, key, stream, &prefix, |name, v| {
            StreamConsumer::decode(Bytes::copy_from_slice(name), v)
        })
    }

    /// The group's pending entry for `id`.
    pub fn stream_pending_entry(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        id: StreamId,
    ) -> Result<Option<PendingEntry>> {
        let m = member(PENDING, &[&group.number.to_be_bytes(), &id.to_bytes()]);
        match self.get_member(Cf::Stream, db, key, &stream.coll, &m)? {
            Some(raw) => PendingEntry::decode(id, &raw).map(Some),
            None => Ok(None),
        }
    }

    /// Visits the group's pending entries with IDs in `[start, end]` in
    /// order (or `rev`), until `visit` returns false.
    #[allow(clippy::too_many_arguments)]
    pub fn stream_pending_range(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        start: StreamId,
        end: StreamId,
        rev: bool,
        visit: impl FnMut(PendingEntry) -> bool,
    ) -> Result<()> {
        if start > end || group.pending == 0 {
            return Ok(());
        }
        let number = group.number.to_be_bytes();
        let from = member(PENDING, &[&number, &start.to_bytes()]);
        let to = member(PENDING, &[&number, &end.to_bytes()]);
        self.scan_stream(
            db,
            key,
            stream,
            (Bound::Included(&from), Bound::Included(&to)),
            rev,
            |m, v| PendingEntry::decode(StreamId::from_bytes(&m[9..])?, v),
            visit,
        )
    }

    /// The IDs in consumer `name`'s pending list within `[start, end]`, at
    /// most `count` (0: all).
    #[allow(clippy::too_many_arguments)]
    pub fn stream_consumer_pending(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        name: &[u8],
        start: StreamId,
        end: StreamId,
        count: u64,
    ) -> Result<Vec<StreamId>> {
        let mut ids = Vec::new();
        if start > end {
            return Ok(ids);
        }
        let prefix = consumer_pending_prefix(group.number, name);
        let mut from = prefix.clone();
        from.extend_from_slice(&start.to_bytes());
        let mut to = prefix.clone();
        to.extend_from_slice(&end.to_bytes());
        self.scan_stream(
            db,
            key,
            stream,
            (Bound::Included(&from), Bound::Included(&to)),
            false,
            |m, _| StreamId::from_bytes(&m[prefix.len()..]),
            |id| {
                ids.push(id);
                count == 0 || (ids.len() as u64) < count
            },
        )?;
        Ok(ids)
    }

    /// Stores a pending entry. `previous` is the entry it replaces, if the
    /// ID was pending already: a change of consumer moves it between the
    /// consumers' lists and counts.
    pub fn stream_put_pending(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &mut StreamGroup,
        entry: &PendingEntry,
        previous: Option<&PendingEntry>,
    ) -> Result<()> {
        let moved = match previous {
            None => {
                group.pending += 1;
                true
            }
            Some(old) if old.consumer != entry.consumer => {
                self.unlink_pending(db, key, stream, group, old)?;
                true
            }
            Some(_) => false,
        };
        if moved {
            self.link_pending(db, key, stream, group, entry)?;
        }
        let m = member(
            PENDING,
            &[&group.number.to_be_bytes(), &entry.id.to_bytes()],
        );
        self.put_member(Cf::Stream, db, key, &stream.coll, &m, entry.encode());
        Ok(())
    }

    /// Removes a pending entry (XACK, or an entry that no longer exists).
    pub fn stream_remove_pending(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &mut StreamGroup,
        entry: &PendingEntry,
    ) -> Result<()> {
        self.unlink_pending(db, key, stream, group, entry)?;
        let m = member(
            PENDING,
            &[&group.number.to_be_bytes(), &entry.id.to_bytes()],
        );
        self.delete_member(Cf::Stream, db, key, &stream.coll, &m);
        group.pending = group.pending.saturating_sub(1);
        Ok(())
    }

    /// Adds the entry to its consumer's list and count.
    fn link_pending(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        entry: &PendingEntry,
    ) -> Result<()> {
        let mut q = consumer_pending_prefix(group.number, &entry.consumer);
        q.extend_from_slice(&entry.id.to_bytes());
        self.put_member(Cf::Stream, db, key, &stream.coll, &q, Bytes::new());
        self.adjust_consumer_pending(db, key, stream, group, &entry.consumer, 1)
    }

    /// Takes the entry off its consumer's list and count.
    fn unlink_pending(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        entry: &PendingEntry,
    ) -> Result<()> {
        let mut q = consumer_pending_prefix(group.number, &entry.consumer);
        q.extend_from_slice(&entry.id.to_bytes());
        self.delete_member(Cf::Stream, db, key, &stream.coll, &q);
        self.adjust_consumer_pending(db, key, stream, group, &entry.consumer, -1)
    }

    fn adjust_consumer_pending(
        &mut self,
        db: u8,
        key: &[u8],
        stream: &StreamMeta,
        group: &StreamGroup,
        name: &[u8],
        delta: i64,
    ) -> Result<()> {
        let Some(mut consumer) = self.stream_consumer(db, key, stream, group, name)? else {
            return Err(StorageError::Corrupt("pending entry of no consumer"));
        };
        consumer.pending = consumer.pending.saturating_add_signed(delta);
        self.save_consumer(db, key, stream, group, &consumer);
        Ok(())
    }
}

/// The bytes entry `id` with `pairs` adds to `node`'s listpack: flags,
/// ID deltas, [field count], [fields], values, lp-count.
fn entry_bytes(node: &StreamNode, id: StreamId, pairs: &[(Bytes, Bytes)]) -> u64 {
    use firn_prims::listpack::{entry_size, int_entry_size};
    let same = pairs.len() == node.master_fields.len()
        && pairs
            .iter()
            .zip(&node.master_fields)
            .all(|((f, _), m)| f == m);
    let n = pairs.len() as i64;
    let flags = if same { 2 } else { 0 };
    let mut size = int_entry_size(flags)
        + int_entry_size(id.ms.wrapping_sub(node.master.ms) as i64)
        + int_entry_size(id.seq.wrapping_sub(node.master.seq) as i64);
    let mut lp_count = n + 3;
    if !same {
        size += int_entry_size(n);
        lp_count += n + 1;
    }
    for (f, v) in pairs {
        if !same {
            size += entry_size(f);
        }
        size += entry_size(v);
    }
    size + int_entry_size(lp_count)
}
