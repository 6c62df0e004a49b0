//! HyperLogLog values in Redis's own string format (Redis 7.0's
//! `hyperloglog.c`, ported), so an HLL moves between Redis and Firn with
//! GET/SET/DUMP/RESTORE and every command leaves the bytes Redis would.
//!
//! A value is a 16-byte header, `HYLL`, an encoding byte (0 dense, 1
//! sparse), three unused bytes and the cached cardinality (8 bytes, little
//! endian; its top bit set means "stale, recompute"), then the registers:
//!
//! - dense: 16384 registers of 6 bits, packed from the least significant
//!   bit of each byte up, 12288 bytes;
//! - sparse: run-length opcodes, ZERO `00xxxxxx` (1..64 zero registers),
//!   XZERO `01xxxxxx yyyyyyyy` (1..16384 zero registers) and VAL `1vvvvvxx`
//!   (1..4 registers holding 1..32). A sparse HLL turns dense when a register
//!   needs more than 32 or the string would grow past
//!   `hll-sparse-max-bytes`.
//!
//! An element hashes with MurmurHash64A (seed 0xadc83b19): the low 14 bits
//! pick the register, the run of zeros above them (plus one) is its value.
//! The count uses Ertl's estimator ("New cardinality estimation algorithms
//! for HyperLogLog sketches", arXiv:1702.01284), as Redis 7 does.
//!
//! Strings that only look like HLLs (written with SET or SETRANGE) are read
//! exactly as Redis reads them, so a command fails or succeeds, and leaves
//! the bytes, as in Redis. Redis reads one byte past the end of a value (its
//! buffer's terminator) when the last opcode is a cut-off XZERO, and a
//! sparse update can leave that byte non-zero: `past_end` models it for the
//! duration of one command.
//!
//! firn-server's PF* commands (`commands/hyperloglog.rs`) are the user:
//! they read and write the string, this module works on its bytes.

/// Registers are addressed by this many bits of the hash.
const P: u32 = 14;
/// Hash bits left for the run of zeros.
const Q: usize = 64 - P as usize;
pub const REGISTERS: usize = 1 << P;
const REGISTER_MAX: u8 = 63;
pub const HEADER_BYTES: usize = 16;
pub const DENSE_BYTES: usize = HEADER_BYTES + REGISTERS * 6 / 8;
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const ENCODING_AT: usize = 4;
const CARD_AT: usize = 8;
const HASH_SEED: u64 = 0xadc8_3b19;
/// 0.5 / ln(2).
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

const SPARSE_VAL_MAX_VALUE: u8 = 32;
const SPARSE_VAL_MAX_LEN: usize = 4;
const SPARSE_ZERO_MAX_LEN: usize = 64;
const SPARSE_XZERO_MAX_LEN: usize = 16384;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HllError {
    /// Not a string a HyperLogLog command accepts (bad header or length).
    NotHll,
    /// A sparse HLL whose opcodes do not cover exactly the 16384 registers.
    Corrupt,
}

/// One register value per register, as PFCOUNT of several keys and PFMERGE
/// gather them.
pub type Registers = [u8; REGISTERS];

/// The register and zero-run length an element sets.
fn pattern_len(element: &[u8]) -> (usize, u8) {
    let hash = murmur_hash64a(element, HASH_SEED);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    // The forced top bit bounds the run at Q zeros.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// MurmurHash2, 64-bit, the endian-neutral variant Redis uses.
pub fn murmur_hash64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut blocks = data.chunks_exact(8);
    for block in &mut blocks {
        let mut k = block
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

// ------------------------------------------------------------ dense registers

fn dense_get(registers: &[u8], index: usize) -> u8 {
    let byte = index * 6 / 8;
    let shift = (index * 6) & 7;
    let b0 = u32::from(registers.get(byte).copied().unwrap_or(0));
    let b1 = u32::from(registers.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> shift) | (b1 << (8 - shift))) & u32::from(REGISTER_MAX)) as u8
}

fn dense_put(registers: &mut [u8], index: usize, value: u8) {
    let byte = index * 6 / 8;
    let shift = (index * 6) & 7;
    let value = u32::from(value);
    let max = u32::from(REGISTER_MAX);
    if let Some(b) = registers.get_mut(byte) {
        *b &= !((max << shift) as u8);
        *b |= (value << shift) as u8;
    }
    if let Some(b) = registers.get_mut(byte + 1) {
        *b &= !((max >> (8 - shift)) as u8);
        *b |= (value >> (8 - shift)) as u8;
    }
}

/// Raises register `index` to `count`; whether it changed.
fn dense_raise(registers: &mut [u8], index: usize, count: u8) -> bool {
    if count > dense_get(registers, index) {
        dense_put(registers, index, count);
        true
    } else {
        false
    }
}

// ------------------------------------------------------------ sparse opcodes

fn is_zero(op: u8) -> bool {
    op & 0xc0 == 0
}

fn is_xzero(op: u8) -> bool {
    op & 0xc0 == 0x40
}

fn is_val(op: u8) -> bool {
    op & 0x80 != 0
}

fn zero_len(op: u8) -> usize {
    usize::from(op & 0x3f) + 1
}

fn xzero_len(op: u8, next: u8) -> usize {
    ((usize::from(op & 0x3f) << 8) | usize::from(next)) + 1
}

fn val_value(op: u8) -> u8 {
    ((op >> 2) & 0x1f) + 1
}

fn val_len(op: u8) -> usize {
    usize::from(op & 0x3) + 1
}

fn val_op(value: u8, len: usize) -> u8 {
    ((value - 1) << 2) | (len as u8 - 1) | 0x80
}

/// ZERO or XZERO for `len` zero registers, appended to `seq`.
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    if len > SPARSE_ZERO_MAX_LEN {
        let l = len - 1;
        seq.push((l >> 8) as u8 | 0x40);
        seq.push((l & 0xff) as u8);
    } else {
        seq.push((len - 1) as u8);
    }
}

/// One decoded opcode of a sparse walk.
enum Op {
    Zeros(usize),
    Val { value: u8, len: usize },
}

/// An HLL string being read or updated: its `len` bytes and, in `buf[len]`,
/// the byte after its end that Redis's sparse code can read and write (see
/// the file comment). The opcode walks live here; they are only called on a
/// sparse value.
struct ValueBuf {
    buf: Vec<u8>,
    len: usize,
}

impl ValueBuf {
    fn at(&self, i: usize) -> u8 {
        self.buf.get(i).copied().unwrap_or(0)
    }

    /// The opcode at `p` and its size in bytes.
    fn op(&self, p: usize) -> (Op, usize) {
        let op = self.at(p);
        if is_zero(op) {
            (Op::Zeros(zero_len(op)), 1)
        } else if is_xzero(op) {
            (Op::Zeros(xzero_len(op, self.at(p + 1))), 2)
        } else {
            (
                Op::Val {
                    value: val_value(op),
                    len: val_len(op),
                },
                1,
            )
        }
    }

    /// Visits every register a VAL opcode sets; whether the opcodes cover
    /// exactly the 16384 registers. Like Redis (with the fix for
    /// CVE-2025-32023 that the reference server carries), the walk stops at
    /// the first opcode that would run past the last register.
    fn for_each_set(&self, mut visit: impl FnMut(usize, u8)) -> bool {
        let (mut p, mut index) = (HEADER_BYTES, 0usize);
        while p < self.len {
            let (op, size) = self.op(p);
            let run = match op {
                Op::Zeros(run) => run,
                Op::Val { len, .. } => len,
            };
            if index + run > REGISTERS {
                return false;
            }
            if let Op::Val { value, len } = op {
                for i in index..index + len {
                    visit(i, value);
                }
            }
            index += run;
            p += size;
        }
        index == REGISTERS
    }

    /// The register histogram; `None` if the opcodes do not cover exactly
    /// the 16384 registers (the runs are all counted first, as Redis does).
    fn histogram(&self) -> Option<[u64; 64]> {
        let mut histogram = [0u64; 64];
        let (mut p, mut index) = (HEADER_BYTES, 0usize);
        while p < self.len {
            let (op, size) = self.op(p);
            match op {
                Op::Zeros(run) => {
                    index += run;
                    histogram[0] += run as u64;
                }
                Op::Val { value, len } => {
                    index += len;
                    histogram[usize::from(value)] += len as u64;
                }
            }
            p += size;
        }
        (index == REGISTERS).then_some(histogram)
    }

    /// The dense string with the same header (encoding aside) and registers.
    fn to_dense(&self) -> Result<Vec<u8>, HllError> {
        let mut dense = vec![0u8; DENSE_BYTES];
        dense[..HEADER_BYTES].copy_from_slice(&self.buf[..HEADER_BYTES]);
        dense[ENCODING_AT] = DENSE;
        let registers = &mut dense[HEADER_BYTES..];
        if self.for_each_set(|i, value| dense_put(registers, i, value)) {
            Ok(dense)
        } else {
            Err(HllError::Corrupt)
        }
    }

    /// Raises register `index` to `count` in place (hllSparseSet). `Ok(None)`
    /// means the sparse form cannot hold the result: the caller promotes.
    fn raise(&mut self, index: usize, count: u8, max_bytes: u64) -> Result<Option<bool>, HllError> {
        if count > SPARSE_VAL_MAX_VALUE {
            return Ok(None);
        }
        // Step 1: find the opcode covering the register.
        let end = self.len;
        let (mut p, mut first, mut span) = (HEADER_BYTES, 0usize, 0usize);
        let mut prev = None;
        while p < end {
            let (op, size) = self.op(p);
            span = match op {
                Op::Zeros(run) => run,
                Op::Val { len, .. } => len,
            };
            if index < first + span {
                break;
            }
            prev = Some(p);
            p += size;
            first += span;
        }
        if span == 0 || p >= end {
            return Err(HllError::Corrupt);
        }
        let op = self.at(p);
        let old_len = if is_xzero(op) { 2 } else { 1 };
        let next = Some(p + old_len).filter(|&n| n < end);
        let (op_run, _) = self.op(p);

        // Step 2: the trivial cases update the opcode in place; the others
        // split it into up to three opcodes.
        let in_place = match op_run {
            Op::Val { value, .. } if value >= count => return Ok(Some(false)),
            Op::Val { len, .. } => len == 1,
            Op::Zeros(run) => is_zero(op) && run == 1,
        };
        if in_place {
            self.buf[p] = val_op(count, 1);
        } else {
            let last = first + span - 1;
            let mut seq = Vec::with_capacity(5);
            match op_run {
                Op::Zeros(_) => {
                    if index != first {
                        push_zeros(&mut seq, index - first);
                    }
                    seq.push(val_op(count, 1));
                    if index != last {
                        push_zeros(&mut seq, last - index);
                    }
                }
                Op::Val { value, .. } => {
                    if index != first {
                        seq.push(val_op(value, index - first));
                    }
                    seq.push(val_op(count, 1));
                    if index != last {
                        seq.push(val_op(value, last - index));
                    }
                }
            }
            // Step 3: put the new sequence in place of the opcode.
            let grows_by = seq.len() as i64 - old_len as i64;
            if grows_by > 0 && (self.len as u64).saturating_add(grows_by as u64) > max_bytes {
                return Ok(None);
            }
            let new_len = (self.len as i64 + grows_by) as usize;
            let room = new_len.max(p + seq.len()).max(self.len) + 1;
            if self.buf.len() < room {
                self.buf.resize(room, 0);
            }
            if grows_by != 0 {
                if let Some(next) = next {
                    let to = (next as i64 + grows_by) as usize;
                    self.buf.copy_within(next..end, to);
                }
            }
            self.len = new_len;
            self.buf[new_len] = 0;
            // A cut-off XZERO at the end: the last byte of the sequence lands
            // past the new end, as in Redis.
            self.buf[p..p + seq.len()].copy_from_slice(&seq);
        }

        // Step 4: merge up to five adjacent VAL opcodes of equal value.
        let mut p = prev.unwrap_or(HEADER_BYTES);
        let mut scans = 5;
        while p < self.len && scans > 0 {
            scans -= 1;
            let op = self.at(p);
            if is_xzero(op) {
                p += 2;
                continue;
            }
            if is_zero(op) {
                p += 1;
                continue;
            }
            let next_op = self.at(p + 1);
            if p + 1 < self.len && is_val(next_op) && val_value(op) == val_value(next_op) {
                let len = val_len(op) + val_len(next_op);
                if len <= SPARSE_VAL_MAX_LEN {
                    self.buf[p + 1] = val_op(val_value(op), len);
                    self.buf.copy_within(p + 1..self.len + 1, p);
                    self.len -= 1;
                    self.buf[self.len] = 0;
                    continue;
                }
            }
            p += 1;
        }
        self.buf[CARD_AT + 7] |= 0x80;
        Ok(Some(true))
    }
}

// ------------------------------------------------------------ the value

/// A HyperLogLog string whose header was checked (as Redis's
/// `isHLLObjectOrReply` checks it); the registers are checked as they are
/// read.
pub struct Hll {
    value: ValueBuf,
}

impl Hll {
    /// The value PFADD creates: sparse, every register zero.
    pub fn new() -> Hll {
        let mut buf = vec![0u8; HEADER_BYTES];
        buf[..4].copy_from_slice(b"HYLL");
        buf[ENCODING_AT] = SPARSE;
        let mut left = REGISTERS;
        while left > 0 {
            let run = left.min(SPARSE_XZERO_MAX_LEN);
            push_zeros(&mut buf, run);
            left -= run;
        }
        Hll::from_vec(buf)
    }

    /// Accepts a string value as PFADD/PFCOUNT/PFMERGE do.
    pub fn from_value(value: &[u8]) -> Result<Hll, HllError> {
        if value.len() < HEADER_BYTES
            || &value[..4] != b"HYLL"
            || value[ENCODING_AT] > SPARSE
            || (value[ENCODING_AT] == DENSE && value.len() != DENSE_BYTES)
        {
            return Err(HllError::NotHll);
        }
        Ok(Hll::from_vec(value.to_vec()))
    }

    fn from_vec(mut buf: Vec<u8>) -> Hll {
        let len = buf.len();
        buf.push(0);
        Hll {
            value: ValueBuf { buf, len },
        }
    }

    pub fn is_dense(&self) -> bool {
        self.value.buf[ENCODING_AT] == DENSE
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.value.buf[..self.value.len]
    }

    pub fn len(&self) -> usize {
        self.value.len
    }

    pub fn is_empty(&self) -> bool {
        self.value.len == 0
    }

    fn dense_registers(&mut self) -> &mut [u8] {
        let len = self.value.len;
        &mut self.value.buf[HEADER_BYTES..len]
    }

    /// Adds an element; whether a register changed. A sparse HLL is made
    /// dense as Redis does it (see [`Hll::raise`]).
    pub fn add(&mut self, element: &[u8], sparse_max_bytes: u64) -> Result<bool, HllError> {
        let (index, count) = pattern_len(element);
        self.raise(index, count, sparse_max_bytes)
    }

    /// Raises register `index` to `count`; whether it changed. A sparse HLL
    /// turns dense when `count` is above 32 or the sparse string would grow
    /// past `sparse_max_bytes`.
    pub fn raise(
        &mut self,
        index: usize,
        count: u8,
        sparse_max_bytes: u64,
    ) -> Result<bool, HllError> {
        if self.is_dense() {
            return Ok(dense_raise(self.dense_registers(), index, count));
        }
        match self.value.raise(index, count, sparse_max_bytes)? {
            Some(changed) => Ok(changed),
            None => {
                self.make_dense()?;
                Ok(dense_raise(self.dense_registers(), index, count))
            }
        }
    }

    /// Converts a sparse HLL to the dense encoding (a dense one is kept).
    pub fn make_dense(&mut self) -> Result<(), HllError> {
        if !self.is_dense() {
            *self = Hll::from_vec(self.value.to_dense()?);
        }
        Ok(())
    }

    /// The cached cardinality, if it is current.
    pub fn cached_cardinality(&self) -> Option<u64> {
        let card = &self.value.buf[CARD_AT..CARD_AT + 8];
        (card[7] & 0x80 == 0).then(|| {
            card.iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
        })
    }

    pub fn set_cached_cardinality(&mut self, card: u64) {
        self.value.buf[CARD_AT..CARD_AT + 8].copy_from_slice(&card.to_le_bytes());
    }

    pub fn invalidate_cache(&mut self) {
        self.value.buf[CARD_AT + 7] |= 0x80;
    }

    /// The estimated cardinality, computed from the registers.
    pub fn cardinality(&self) -> Result<u64, HllError> {
        if self.is_dense() {
            let mut histogram = [0u64; 64];
            let registers = &self.value.buf[HEADER_BYTES..self.value.len];
            for i in 0..REGISTERS {
                histogram[usize::from(dense_get(registers, i))] += 1;
            }
            Ok(estimate(&histogram))
        } else {
            self.value
                .histogram()
                .map(|h| estimate(&h))
                .ok_or(HllError::Corrupt)
        }
    }

    /// Raises each of `max` to this HLL's register, if higher.
    pub fn merge_into(&self, max: &mut Registers) -> Result<(), HllError> {
        if self.is_dense() {
            let registers = &self.value.buf[HEADER_BYTES..self.value.len];
            for (i, slot) in max.iter_mut().enumerate() {
                *slot = (*slot).max(dense_get(registers, i));
            }
            Ok(())
        } else if self.value.for_each_set(|i, value| {
            if value > max[i] {
                max[i] = value;
            }
        }) {
            Ok(())
        } else {
            Err(HllError::Corrupt)
        }
    }
}

impl Hll {
    /// Every register's value, in register order (a dense HLL only).
    pub fn dense_register_values(&self) -> Option<Vec<u8>> {
        let registers = &self.value.buf[HEADER_BYTES..self.value.len];
        self.is_dense()
            .then(|| (0..REGISTERS).map(|i| dense_get(registers, i)).collect())
    }

    /// The sparse opcodes as PFDEBUG DECODE prints them (`z:3 Z:100 v:2,1`);
    /// `None` for a dense HLL.
    pub fn decode_sparse(&self) -> Option<String> {
        if self.is_dense() {
            return None;
        }
        let mut out = Vec::new();
        let mut p = HEADER_BYTES;
        while p < self.value.len {
            let op = self.value.at(p);
            let (text, size) = match self.value.op(p) {
                (Op::Zeros(run), size) if is_zero(op) => (format!("z:{run}"), size),
                (Op::Zeros(run), size) => (format!("Z:{run}"), size),
                (Op::Val { value, len }, size) => (format!("v:{value},{len}"), size),
            };
            out.push(text);
            p += size;
        }
        Some(out.join(" "))
    }
}

/// PFSELFTEST, as Redis runs it: packed registers keep what is written to
/// them without disturbing their neighbours, and the estimate of up to ten
/// million distinct elements stays within six standard errors, with the
/// sparse and dense encodings agreeing while the sparse one is in use.
pub fn self_test(sparse_max_bytes: u64, seed: u64) -> Result<(), String> {
    let mut state = seed | 1;
    let mut random = move || {
        // xorshift64: any fair source will do for a self-test.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut registers = vec![0u8; REGISTERS * 6 / 8];
    let mut expected = vec![0u8; REGISTERS];
    for _ in 0..1000 {
        for (i, slot) in expected.iter_mut().enumerate() {
            *slot = (random() & u64::from(REGISTER_MAX)) as u8;
            dense_put(&mut registers, i, *slot);
        }
        for (i, &want) in expected.iter().enumerate() {
            let got = dense_get(&registers, i);
            if got != want {
                return Err(format!(
                    "TESTFAILED Register {i} should be {want} but is {got}"
                ));
            }
        }
    }
    let mut dense = Hll::new();
    dense
        .make_dense()
        .map_err(|_| "TESTFAILED dense conversion".to_string())?;
    let mut sparse = Hll::new();
    let relative_error = 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint = 1u64;
    let offset = random();
    let failed = |_| "TESTFAILED corrupt HLL".to_string();
    for j in 1..=10_000_000u64 {
        let element = (j ^ offset).to_le_bytes();
        dense.add(&element, sparse_max_bytes).map_err(failed)?;
        sparse.add(&element, sparse_max_bytes).map_err(failed)?;
        if j != checkpoint {
            continue;
        }
        if j < sparse_max_bytes / 2 && sparse.is_dense() {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let card = dense.cardinality().map_err(failed)?;
        if card != sparse.cardinality().map_err(failed)? {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let error = checkpoint.abs_diff(card);
        let max_error = if j == 10 {
            1
        } else {
            (relative_error * 6.0 * checkpoint as f64).ceil() as u64
        };
        if error > max_error {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{error}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

impl Default for Hll {
    fn default() -> Self {
        Hll::new()
    }
}

/// The cardinality of registers gathered from several HLLs.
pub fn registers_cardinality(registers: &Registers) -> u64 {
    let mut histogram = [0u64; 64];
    for &r in registers.iter() {
        histogram[usize::from(r & 63)] += 1;
    }
    estimate(&histogram)
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_prime = z;
        z += x * y;
        y += y;
        if z_prime == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let z_prime = z;
        y *= 0.5;
        // Redis writes pow(1 - x, 2), which the compiler turns into this.
        z -= (1.0 - x) * (1.0 - x) * y;
        if z_prime == z {
            return z / 3.0;
        }
    }
}

/// Ertl's improved estimator over the register histogram, rounded half
/// away from zero. A result out of range is 2^63, as Redis's llroundl and
/// unsigned conversion make it on x86-64.
fn estimate(histogram: &[u64; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - histogram[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += histogram[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histogram[0] as f64 / m);
    let e = (ALPHA_INF * m * m / z).round();
    if e.is_finite() && e < 9_223_372_036_854_775_808.0 {
        e as u64
    } else {
        1 << 63
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_is_redis_constant() {
        let redis: f64 = "0.721347520444481703680".parse().unwrap();
        assert_eq!(ALPHA_INF.to_bits(), redis.to_bits());
    }

    #[test]
    fn new_hll_is_redis_empty_sparse_value() {
        let hll = Hll::new();
        assert_eq!(
            hll.as_bytes(),
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
        );
        assert_eq!(hll.cardinality(), Ok(0));
    }

    #[test]
    fn sparse_and_dense_agree() {
        let mut sparse = Hll::new();
        let mut dense = Hll::new();
        dense.make_dense().unwrap();
        for i in 0..2000u32 {
            let e = i.to_string();
            assert_eq!(
                sparse.add(e.as_bytes(), u64::MAX).unwrap(),
                dense.add(e.as_bytes(), u64::MAX).unwrap()
            );
        }
        assert!(!sparse.is_dense());
        assert_eq!(sparse.cardinality(), dense.cardinality());
        let mut converted = Hll::from_value(sparse.as_bytes()).unwrap();
        converted.make_dense().unwrap();
        assert_eq!(
            &converted.as_bytes()[HEADER_BYTES..],
            &dense.as_bytes()[HEADER_BYTES..]
        );
        let card = dense.cardinality().unwrap();
        assert!((1900..2100).contains(&card), "{card}");
    }

    #[test]
    fn promotion_at_the_sparse_limit() {
        let mut hll = Hll::new();
        let mut i = 0u32;
        while !hll.is_dense() {
            assert!(hll.len() <= 3000);
            hll.add(i.to_string().as_bytes(), 3000).unwrap();
            i += 1;
        }
        assert_eq!(hll.len(), DENSE_BYTES);
    }

    #[test]
    fn self_test_passes() {
        assert_eq!(self_test(3000, 42), Ok(()));
    }

    #[test]
    fn header_checks() {
        assert_eq!(Hll::from_value(b"HYLL").err(), Some(HllError::NotHll));
        let mut v = Hll::new().as_bytes().to_vec();
        v[4] = 2;
        assert_eq!(Hll::from_value(&v).err(), Some(HllError::NotHll));
        v[4] = 0;
        assert_eq!(Hll::from_value(&v).err(), Some(HllError::NotHll));
        let mut short = Hll::new().as_bytes().to_vec();
        short.pop();
        short.push(0x00);
        let hll = Hll::from_value(&short).unwrap();
        assert_eq!(hll.cardinality(), Err(HllError::Corrupt));
    }
}
