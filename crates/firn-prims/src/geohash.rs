//! Redis 7.0's geohash arithmetic (geohash.c, geohash_helper.c and the
//! pieces of geo.c that are pure math), rewritten in Rust so that every
//! score, coordinate and distance comes out bit for bit as Redis computes
//! it: the same operations in the same order, the same libm calls, and C's
//! conversions where Redis relies on them.
//!
//! A position is a 52-bit score: latitude and longitude, each scaled to 26
//! bits over the Mercator-safe ranges (longitude -180..180, latitude
//! -85.05112878..85.05112878), interleaved with latitude in the even bits
//! and longitude in the odd bits. A search covers its shape with the cell
//! of the center plus its eight neighbours at a step (bits per axis) chosen
//! from the radius; each cell is one contiguous score range of the sorted
//! set.
//!
//! firn-server's GEO commands (`commands/geo.rs`) are the user: they keep
//! the sorted set, this module only computes.

pub const STEP_MAX: u8 = 26;
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;
/// Earth's quadratic mean radius for WGS-84, as geohash_helper.c has it.
pub const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;
const MERCATOR_MAX: f64 = 20037726.37;
/// `M_PI / 180.0` as C folds it.
const D_R: f64 = std::f64::consts::PI / 180.0;

fn deg_rad(angle: f64) -> f64 {
    angle * D_R
}

fn rad_deg(angle: f64) -> f64 {
    angle / D_R
}

/// A cell: `step` bits per axis, interleaved in the low `2 * step` bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HashBits {
    pub bits: u64,
    pub step: u8,
}

impl HashBits {
    /// Redis's HASHISZERO: a neighbour dropped from the search.
    fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The cell's bits shifted up to 52 (geohashAlign52Bits).
    pub fn align52(&self) -> u64 {
        self.bits << (52 - u32::from(self.step) * 2)
    }

    /// The sorted-set scores `[min, max)` of every position in the cell.
    pub fn score_range(&self) -> (u64, u64) {
        let next = HashBits {
            bits: self.bits + 1,
            step: self.step,
        };
        (self.align52(), next.align52())
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

/// The Mercator-limited ranges Redis encodes scores with.
pub const LONG_RANGE: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
pub const LAT_RANGE: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub longitude: Range,
    pub latitude: Range,
}

/// Spreads the 32 bits of `x` over the even bits and those of `y` over the
/// odd bits.
fn interleave64(x: u32, y: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let mut x = u64::from(x);
    let mut y = u64::from(y);
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// The inverse: even bits in the low half, odd bits in the high half.
fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let mut x = interleaved;
    let mut y = interleaved >> 1;
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// geohashEncode: None outside the Mercator limits or the given ranges.
pub fn encode(
    long_range: Range,
    lat_range: Range,
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<HashBits> {
    if step == 0 || step > 32 {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min) * scale;
    let long_offset = (longitude - long_range.min) / (long_range.max - long_range.min) * scale;
    // C converts the (non-negative, at most 2^step) offsets by truncation.
    Some(HashBits {
        bits: interleave64(lat_offset as u32, long_offset as u32),
        step,
    })
}

/// geohashDecode: the cell's bounds.
pub fn decode(long_range: Range, lat_range: Range, hash: HashBits) -> Option<Area> {
    if hash.is_zero() {
        return None;
    }
    let separated = deinterleave64(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = separated as u32;
    let ilono = (separated >> 32) as u32;
    let cells = (1u64 << hash.step) as f64;
    Some(Area {
        latitude: Range {
            min: lat_range.min + (f64::from(ilato) / cells) * lat_scale,
            max: lat_range.min + (f64::from(ilato.wrapping_add(1)) / cells) * lat_scale,
        },
        longitude: Range {
            min: long_range.min + (f64::from(ilono) / cells) * long_scale,
            max: long_range.min + (f64::from(ilono.wrapping_add(1)) / cells) * long_scale,
        },
    })
}

/// The center of a cell, clamped to the Mercator limits.
fn area_center(area: &Area) -> [f64; 2] {
    let longitude = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let latitude = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    [longitude, latitude]
}

/// C's `(uint64_t)` of a double as gcc compiles it on x86-64: truncation
/// through `cvttsd2si`, whose out-of-range result is `1 << 63`.
pub fn c_double_to_u64(value: f64) -> u64 {
    const TWO_63: f64 = 9223372036854775808.0;
    if value >= TWO_63 {
        (c_double_to_i64(value - TWO_63) as u64) ^ (1 << 63)
    } else {
        c_double_to_i64(value) as u64
    }
}

/// C's `(long long)` of a double on x86-64 (`cvttsd2si`).
pub fn c_double_to_i64(value: f64) -> i64 {
    const TWO_63: f64 = 9223372036854775808.0;
    if !(-TWO_63..TWO_63).contains(&value) {
        i64::MIN
    } else {
        value as i64
    }
}

/// decodeGeohash: the longitude and latitude a sorted-set score stands
/// for. Like Redis, any score decodes (a score that is not a geohash gives
/// a clamped, meaningless position).
pub fn decode_score(score: f64) -> [f64; 2] {
    let hash = HashBits {
        bits: c_double_to_u64(score),
        step: STEP_MAX,
    };
    match decode(LONG_RANGE, LAT_RANGE, hash) {
        Some(area) => area_center(&area),
        None => [0.0, 0.0],
    }
}

/// GEOADD's score for a position already checked against the limits.
pub fn encode_score(longitude: f64, latitude: f64) -> u64 {
    encode(LONG_RANGE, LAT_RANGE, longitude, latitude, STEP_MAX)
        .map(|hash| hash.align52())
        .unwrap_or(0)
}

/// Whether GEOADD and the searches accept this position.
pub fn valid_position(longitude: f64, latitude: f64) -> bool {
    (LONG_MIN..=LONG_MAX).contains(&longitude) && (LAT_MIN..=LAT_MAX).contains(&latitude)
}

/// GEOHASH's 11-character string: the position re-encoded over the
/// standard ranges (latitude -90..90); the eleventh character stands for
/// bits Redis does not have and is always '0'.
pub fn geohash_string(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let [longitude, latitude] = decode_score(score);
    let standard_long = Range {
        min: -180.0,
        max: 180.0,
    };
    let standard_lat = Range {
        min: -90.0,
        max: 90.0,
    };
    let bits = encode(standard_long, standard_lat, longitude, latitude, STEP_MAX)
        .map_or(0, |hash| hash.bits);
    let mut out = [b'0'; 11];
    for (i, slot) in out.iter_mut().take(10).enumerate() {
        let index = (bits >> (52 - (i + 1) * 5)) & 0x1f;
        *slot = ALPHABET[index as usize];
    }
    out
}

fn move_x(hash: &mut HashBits, direction: i8) {
    if direction == 0 {
        return;
    }
    let mut x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let y = hash.bits & 0x5555555555555555;
    let zz = 0x5555555555555555u64 >> (64 - u32::from(hash.step) * 2);
    if direction > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaaaaaaaaaaaaaau64 >> (64 - u32::from(hash.step) * 2);
    hash.bits = x | y;
}

fn move_y(hash: &mut HashBits, direction: i8) {
    if direction == 0 {
        return;
    }
    let x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let mut y = hash.bits & 0x5555555555555555;
    let zz = 0xaaaaaaaaaaaaaaaau64 >> (64 - u32::from(hash.step) * 2);
    if direction > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555555555555555u64 >> (64 - u32::from(hash.step) * 2);
    hash.bits = x | y;
}

/// The eight cells around one (geohashNeighbors).
#[derive(Clone, Copy, Debug, Default)]
pub struct Neighbors {
    pub north: HashBits,
    pub east: HashBits,
    pub west: HashBits,
    pub south: HashBits,
    pub north_east: HashBits,
    pub south_east: HashBits,
    pub north_west: HashBits,
    pub south_west: HashBits,
}

fn neighbors(hash: &HashBits) -> Neighbors {
    let moved = |dx: i8, dy: i8| {
        let mut cell = *hash;
        move_x(&mut cell, dx);
        move_y(&mut cell, dy);
        cell
    };
    Neighbors {
        east: moved(1, 0),
        west: moved(-1, 0),
        south: moved(0, -1),
        north: moved(0, 1),
        north_west: moved(-1, 1),
        north_east: moved(1, 1),
        south_east: moved(1, -1),
        south_west: moved(-1, -1),
    }
}

/// geohashEstimateStepsByRadius: the step whose cells are about as wide as
/// the radius, one or two less towards the poles.
pub fn estimate_steps_by_radius(range_meters: f64, latitude: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut range_meters = range_meters;
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&latitude) {
        step -= 1;
        if !(-80.0..=80.0).contains(&latitude) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// What a search covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeKind {
    /// BYRADIUS (and GEORADIUS*), in the request's unit.
    Circle { radius: f64 },
    /// BYBOX, in the request's unit.
    Rectangle { width: f64, height: f64 },
}

/// A search shape (Redis's GeoShape): center, size and the unit's size in
/// meters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub center: [f64; 2],
    pub kind: ShapeKind,
    pub conversion: f64,
}

impl Shape {
    /// geohashBoundingBox: `[min_long, min_lat, max_long, max_lat]`.
    fn bounding_box(&self) -> [f64; 4] {
        let [longitude, latitude] = self.center;
        let (height, width) = match self.kind {
            ShapeKind::Circle { radius } => (self.conversion * radius, self.conversion * radius),
            ShapeKind::Rectangle { width, height } => (
                self.conversion * (height / 2.0),
                self.conversion * (width / 2.0),
            ),
        };
        let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
        let long_delta_top =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
        let long_delta_bottom =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
        let long_delta = if latitude < 0.0 {
            long_delta_bottom
        } else {
            long_delta_top
        };
        [
            longitude - long_delta,
            latitude - lat_delta,
            longitude + long_delta,
            latitude + lat_delta,
        ]
    }

    /// The distance from the center to `point` if the point is inside the
    /// shape (geoAppendIfWithinShape's test), in meters.
    pub fn distance_if_inside(&self, point: [f64; 2]) -> Option<f64> {
        let [x1, y1] = self.center;
        let [x2, y2] = point;
        match self.kind {
            ShapeKind::Circle { radius } => {
                let distance = distance(x1, y1, x2, y2);
                // As C's `distance > radius` test: a NaN distance is inside.
                match distance.partial_cmp(&(radius * self.conversion)) {
                    Some(std::cmp::Ordering::Greater) => None,
                    _ => Some(distance),
                }
            }
            ShapeKind::Rectangle { width, height } => {
                let width_m = width * self.conversion;
                let height_m = height * self.conversion;
                let long_distance = distance(x2, y2, x1, y2);
                let lat_distance = distance(x2, y2, x2, y1);
                if long_distance > width_m / 2.0 || lat_distance > height_m / 2.0 {
                    return None;
                }
                Some(distance(x1, y1, x2, y2))
            }
        }
    }

    /// geohashCalculateAreasByShapeWGS84 and membersOfAllNeighbors: the
    /// cells to read, in Redis's order (center, N, S, E, W, NE, NW, SE,
    /// SW), without the ones found useless and without a cell equal to the
    /// one read just before it.
    pub fn search_cells(&self) -> Vec<HashBits> {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounding_box();
        let [longitude, latitude] = self.center;
        let radius_meters = match self.kind {
            ShapeKind::Circle { radius } => radius,
            ShapeKind::Rectangle { width, height } => {
                ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
            }
        } * self.conversion;
        let mut steps = estimate_steps_by_radius(radius_meters, latitude);
        let cell_at = |steps: u8| {
            let hash =
                encode(LONG_RANGE, LAT_RANGE, longitude, latitude, steps).unwrap_or_default();
            let around = neighbors(&hash);
            let area = decode(LONG_RANGE, LAT_RANGE, hash);
            (hash, around, area)
        };
        let (mut hash, mut around, mut area) = cell_at(steps);
        let decoded = |cell: HashBits| decode(LONG_RANGE, LAT_RANGE, cell);
        let too_coarse = decoded(around.north).is_some_and(|a| a.latitude.max < max_lat)
            || decoded(around.south).is_some_and(|a| a.latitude.min > min_lat)
            || decoded(around.east).is_some_and(|a| a.longitude.max < max_lon)
            || decoded(around.west).is_some_and(|a| a.longitude.min > min_lon);
        if steps > 1 && too_coarse {
            steps -= 1;
            (hash, around, area) = cell_at(steps);
        }
        if steps >= 2 {
            if let Some(area) = area {
                let zero = HashBits::default();
                if area.latitude.min < min_lat {
                    around.south = zero;
                    around.south_west = zero;
                    around.south_east = zero;
                }
                if area.latitude.max > max_lat {
                    around.north = zero;
                    around.north_east = zero;
                    around.north_west = zero;
                }
                if area.longitude.min < min_lon {
                    around.west = zero;
                    around.south_west = zero;
                    around.north_west = zero;
                }
                if area.longitude.max > max_lon {
                    around.east = zero;
                    around.south_east = zero;
                    around.north_east = zero;
                }
            }
        }
        let all = [
            hash,
            around.north,
            around.south,
            around.east,
            around.west,
            around.north_east,
            around.north_west,
            around.south_east,
            around.south_west,
        ];
        let mut cells: Vec<HashBits> = Vec::with_capacity(9);
        // Redis remembers the last cell read by index, 0 meaning none: a
        // neighbour is never compared with the center cell.
        let mut last: Option<HashBits> = None;
        for (i, cell) in all.into_iter().enumerate() {
            if cell.is_zero() || last == Some(cell) {
                continue;
            }
            cells.push(cell);
            if i > 0 {
                last = Some(cell);
            }
        }
        cells
    }
}

/// geohashGetDistance: the haversine great-circle distance in meters.
pub fn distance(lon1d: f64, lat1d: f64, lon2d: f64, lat2d: f64) -> f64 {
    let lat1r = deg_rad(lat1d);
    let lon1r = deg_rad(lon1d);
    let lat2r = deg_rad(lat2d);
    let lon2r = deg_rad(lon2d);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let v = ((lon2r - lon1r) / 2.0).sin();
    2.0 * EARTH_RADIUS_IN_METERS * (u * u + lat1r.cos() * lat2r.cos() * v * v).sqrt().asin()
}

/// A distance as Redis replies it (`%.4f`; glibc spells NaN, which
/// `asin` of a sum rounded past 1 would give, "nan" or "-nan").
pub fn format_distance(distance: f64) -> String {
    if distance.is_nan() {
        return if distance.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_string();
    }
    format!("{distance:.4}")
}

/// A coordinate as Redis's addReplyHumanLongDouble prints it: `%.17Lf`
/// of the (exactly widened) double, trailing zeros and point dropped.
pub fn format_coordinate(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let mut text = format!("{value:.17}");
    if text.contains('.') {
        while text.ends_with('0') {
            text.pop();
        }
        if text.ends_with('.') {
            text.pop();
        }
    }
    if text == "-0" {
        text = "0".to_string();
    }
    text
}

/// glibc's qsort as Redis gets it (glibc 2.36 `msort`): a top-down merge
/// sort, left half `n / 2`, taking from the left while `cmp <= 0`. Equal to
/// any stable sort for a consistent order; ported so that the order of
/// NaN distances (antipodal points) comes out the same too.
pub fn glibc_qsort<T: Clone>(items: &mut [T], cmp: &impl Fn(&T, &T) -> std::cmp::Ordering) {
    let n = items.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    glibc_qsort(&mut items[..n1], cmp);
    glibc_qsort(&mut items[n1..], cmp);
    let mut merged = Vec::with_capacity(n);
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < n {
        if cmp(&items[i], &items[j]) != std::cmp::Ordering::Greater {
            merged.push(items[i].clone());
            i += 1;
        } else {
            merged.push(items[j].clone());
            j += 1;
        }
    }
    merged.extend_from_slice(&items[i..n1]);
    let done = merged.len();
    items[..done].clone_from_slice(&merged);
}

/// Redis's pqsort (NetBSD's qsort, stopping at partitions outside the
/// requested range): sorts `items` enough that positions `lrange..=rrange`
/// hold what a full sort would put there. Ported step by step, because
/// GEOSEARCH ... COUNT replies the first positions and the order of equal
/// distances is whatever this algorithm leaves.
pub fn pqsort<T>(
    items: &mut [T],
    cmp: &impl Fn(&T, &T) -> std::cmp::Ordering,
    lrange: usize,
    rrange: usize,
) {
    pqsort_part(items, 0, items.len(), cmp, lrange, rrange);
}

fn med3<T>(
    items: &[T],
    a: usize,
    b: usize,
    c: usize,
    cmp: &impl Fn(&T, &T) -> std::cmp::Ordering,
) -> usize {
    use std::cmp::Ordering::{Greater, Less};
    if cmp(&items[a], &items[b]) == Less {
        if cmp(&items[b], &items[c]) == Less {
            b
        } else if cmp(&items[a], &items[c]) == Less {
            c
        } else {
            a
        }
    } else if cmp(&items[b], &items[c]) == Greater {
        b
    } else if cmp(&items[a], &items[c]) == Less {
        a
    } else {
        c
    }
}

fn vecswap<T>(items: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        items.swap(a + i, b + i);
    }
}

/// `_pqsort` over `items[start..start + n]` (indices, not pointers).
fn pqsort_part<T>(
    items: &mut [T],
    mut start: usize,
    mut n: usize,
    cmp: &impl Fn(&T, &T) -> std::cmp::Ordering,
    lrange: usize,
    rrange: usize,
) {
    use std::cmp::Ordering::{Equal, Greater, Less};
    loop {
        let a = start;
        if n < 7 {
            for pm in a + 1..a + n {
                let mut pl = pm;
                while pl > a && cmp(&items[pl - 1], &items[pl]) == Greater {
                    items.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(items, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(items, pm - d, pm, pm + d, cmp);
                pn = med3(items, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(items, pl, pm, pn, cmp);
        }
        items.swap(a, pm);
        let mut pa = a + 1;
        let mut pb = a + 1;
        // pc/pd may step below `a + 1` by one: signed indices.
        let mut pc = (a + n - 1) as isize;
        let mut pd = (a + n - 1) as isize;
        loop {
            while pb as isize <= pc {
                let order = cmp(&items[pb], &items[a]);
                if order == Greater {
                    break;
                }
                if order == Equal {
                    items.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb as isize <= pc {
                let order = cmp(&items[pc as usize], &items[a]);
                if order == Less {
                    break;
                }
                if order == Equal {
                    items.swap(pc as usize, pd as usize);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb as isize > pc {
                break;
            }
            items.swap(pb, pc as usize);
            pb += 1;
            pc -= 1;
        }
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(items, a, pb - r, r);
        let r = ((pd - pc) as usize).min(pn - pd as usize - 1);
        vecswap(items, pb, pn - r, r);
        // A partition is sorted further only if it overlaps the range.
        let overlaps = |s: usize, len: usize| s <= rrange && lrange < s + len;
        let left = pb - pa;
        if left > 1 && overlaps(a, left) {
            pqsort_part(items, a, left, cmp, lrange, rrange);
        }
        let right = (pd - pc) as usize;
        if right > 1 {
            start = pn - right;
            n = right;
            if overlaps(start, n) {
                continue;
            }
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_match_redis() {
        // GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669
        // "Catania" (the Redis documentation's example) and ZSCORE.
        assert_eq!(encode_score(13.361389, 38.115556), 3479099956230698);
        assert_eq!(encode_score(15.087269, 37.502669), 3479447370796909);
        let [lon, lat] = decode_score(3479099956230698.0);
        assert_eq!(format_coordinate(lon), "13.36138933897018433");
        assert_eq!(format_coordinate(lat), "38.11555639549629859");
        assert_eq!(&geohash_string(3479099956230698.0), b"sqc8b49rny0");
        assert_eq!(&geohash_string(3479447370796909.0), b"sqdtr74hyu0");
    }

    #[test]
    fn distance_matches_redis() {
        let [a, b] = [
            decode_score(3479099956230698.0),
            decode_score(3479447370796909.0),
        ];
        let meters = distance(a[0], a[1], b[0], b[1]);
        assert_eq!(format_distance(meters), "166274.1516");
        assert_eq!(format_distance(meters / 1000.0), "166.2742");
    }

    #[test]
    fn interleave_round_trips() {
        for (x, y) in [
            (0u32, 0u32),
            (1, 0),
            (0, 1),
            (0x3ffffff, 0x1234567),
            (u32::MAX, 7),
        ] {
            let both = deinterleave64(interleave64(x, y));
            assert_eq!((both as u32, (both >> 32) as u32), (x, y));
        }
    }

    #[test]
    fn c_conversions() {
        assert_eq!(c_double_to_u64(-1.5), u64::MAX);
        assert_eq!(c_double_to_u64(f64::INFINITY), 0);
        assert_eq!(c_double_to_u64(1e19), 10000000000000000000);
        assert_eq!(c_double_to_i64(f64::NEG_INFINITY), i64::MIN);
        assert_eq!(c_double_to_i64(2.9), 2);
    }

    #[test]
    fn coordinates_print_like_human_long_doubles() {
        assert_eq!(format_coordinate(12.5), "12.5");
        assert_eq!(format_coordinate(-180.0), "-180");
        assert_eq!(format_coordinate(-0.0), "0");
        assert_eq!(format_coordinate(0.1), "0.10000000000000001");
    }

    #[test]
    fn pqsort_sorts_the_requested_range() {
        let mut seed = 7u64;
        for n in [0usize, 1, 5, 7, 8, 40, 41, 200, 1000] {
            let mut items: Vec<u64> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 33) % 50
                })
                .collect();
            let mut sorted = items.clone();
            sorted.sort_unstable();
            if n == 0 {
                continue;
            }
            let top = (n / 3).min(n - 1);
            pqsort(&mut items, &|a: &u64, b: &u64| a.cmp(b), 0, top);
            assert_eq!(items[..=top], sorted[..=top], "n {n}");
            let mut all = items.clone();
            pqsort(&mut all, &|a: &u64, b: &u64| a.cmp(b), 0, n - 1);
            assert_eq!(all, sorted);
        }
    }
}
