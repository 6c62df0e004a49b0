//! Geo: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE and
//! the GEORADIUS family, as Redis 7.0's geo.c does them.
//!
//! A geo set is a sorted set whose scores are 52-bit geohashes (see
//! `firn_prims::geohash`): GEOADD is ZADD with the encoded scores (it runs the
//! sorted-set group's own ZADD and is replicated as that ZADD), and the Z*
//! commands see a geo set as the sorted set it is. A search reads the
//! center cell and its eight neighbours, each one score range of the
//! by-score index, so it visits only the members in those cells; a search
//! that would visit more than [`INLINE_MEMBERS`] moves to the cold-read
//! pool.
//!
//! Replies follow Redis to the digit: distances `%.4f` in the request's
//! unit, coordinates in Redis's human long-double form, results in the
//! order Redis's sorts leave them (glibc's merge sort for a full sort, its
//! own pqsort when COUNT keeps fewer), and without a sort option in cell
//! order, then score order.

use bytes::Bytes;
use firn_prims::geohash::{self, Shape, ShapeKind};
use firn_resp::Reply;
use firn_storage::{Collection, ReadMode, ScoreRange, StorageError, ValueType, ZAddFlags};
use std::cmp::Ordering;

use super::offload::{off_thread_if, INLINE_MEMBERS};
use super::{def, Ctx, Def};
use crate::args::{parse_double, parse_i64};
use crate::errors::{CmdError, CmdResult, NOT_FLOAT, NOT_INTEGER, SYNTAX};

pub const COMMANDS: &[Def] = &[
    def("geoadd", geoadd),
    def("geodist", geodist),
    def("geohash", geohash_cmd),
    def("geopos", geopos),
    def("georadius", georadius),
    def("georadius_ro", georadius_ro),
    def("georadiusbymember", georadiusbymember),
    def("georadiusbymember_ro", georadiusbymember_ro),
    def("geosearch", geosearch),
    def("geosearchstore", geosearchstore),
];

const UNSUPPORTED_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";
const UNDECODABLE_MEMBER: &str = "ERR could not decode requested zset member";

// ---------------------------------------------------------------------------
// Argument parsing
// ---------------------------------------------------------------------------

/// `strcasecmp(arg, keyword) == 0`: Redis compares the C string, which
/// ends at the first NUL byte.
fn c_is(arg: &[u8], keyword: &str) -> bool {
    let end = memchr::memchr(0, arg).unwrap_or(arg.len());
    arg[..end].eq_ignore_ascii_case(keyword.as_bytes())
}

fn double_arg(bytes: &[u8], error: &'static str) -> CmdResult<f64> {
    parse_double(bytes).ok_or(CmdError::Static(error))
}

/// extractLongLatOrReply: two floats within the Mercator limits.
fn lon_lat_arg(lon: &[u8], lat: &[u8]) -> CmdResult<[f64; 2]> {
    let longitude = double_arg(lon, NOT_FLOAT)?;
    let latitude = double_arg(lat, NOT_FLOAT)?;
    if !geohash::valid_position(longitude, latitude) {
        return Err(CmdError::Owned(format!(
            "ERR invalid longitude,latitude pair {longitude:.6},{latitude:.6}"
        )));
    }
    Ok([longitude, latitude])
}

/// extractUnitOrReply: the unit's size in meters.
fn unit_arg(unit: &[u8]) -> CmdResult<f64> {
    if c_is(unit, "m") {
        Ok(1.0)
    } else if c_is(unit, "km") {
        Ok(1000.0)
    } else if c_is(unit, "ft") {
        Ok(0.3048)
    } else if c_is(unit, "mi") {
        Ok(1609.34)
    } else {
        Err(CmdError::Static(UNSUPPORTED_UNIT))
    }
}

/// extractDistanceOrReply: `radius unit` as (radius, meters per unit).
fn radius_args(radius: &[u8], unit: &[u8]) -> CmdResult<(f64, f64)> {
    let radius = double_arg(radius, "ERR need numeric radius")?;
    if radius < 0.0 {
        return Err(CmdError::Static("ERR radius cannot be negative"));
    }
    Ok((radius, unit_arg(unit)?))
}

/// extractBoxOrReply: `width height unit`.
fn box_args(width: &[u8], height: &[u8], unit: &[u8]) -> CmdResult<(f64, f64, f64)> {
    let width = double_arg(width, "ERR need numeric width")?;
    let height = double_arg(height, "ERR need numeric height")?;
    if height < 0.0 || width < 0.0 {
        return Err(CmdError::Static("ERR height or width cannot be negative"));
    }
    Ok((width, height, unit_arg(unit)?))
}

// ---------------------------------------------------------------------------
// GEOADD, GEODIST, GEOHASH, GEOPOS
// ---------------------------------------------------------------------------

/// GEOADD key [NX|XX] [CH] lon lat member ...: checked and encoded here,
/// then added through the sorted-set layer and replicated as `ZADD key
/// [options] score member ...`.
fn geoadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut first = 2;
    let (mut nx, mut xx) = (false, false);
    while let Some(opt) = args.get(first) {
        if c_is(opt, "nx") {
            nx = true;
        } else if c_is(opt, "xx") {
            xx = true;
        } else if !c_is(opt, "ch") {
            break;
        }
        first += 1;
    }
    let triples = &args[first..];
    // No triple at all is ZADD's syntax error, which Redis's GEOADD runs.
    if triples.is_empty() || !triples.len().is_multiple_of(3) || (xx && nx) {
        return Err(CmdError::Static(SYNTAX));
    }
    let ch = args[2..first].iter().any(|opt| c_is(opt, "ch"));
    let mut hashed = Vec::with_capacity(triples.len() / 3);
    for triple in triples.chunks_exact(3) {
        let [longitude, latitude] = lon_lat_arg(&triple[0], &triple[1])?;
        hashed.push((
            geohash::encode_score(longitude, latitude),
            triple[2].clone(),
        ));
    }
    off_thread_if(ctx, hashed.len() as u64)?;
    // A 52-bit geohash is exact as a double.
    let scored: Vec<(f64, Bytes)> = hashed.iter().map(|(h, m)| (*h as f64, m.clone())).collect();
    let flags = ZAddFlags {
        nx,
        xx,
        ..ZAddFlags::default()
    };
    let reply = super::zsets::add_scored(ctx, &args[1], flags, ch, &scored)?;
    let mut replay: Vec<Bytes> = Vec::with_capacity(first + hashed.len() * 2);
    replay.push(Bytes::from_static(b"zadd"));
    replay.extend_from_slice(&args[1..first]);
    for (score, member) in hashed {
        replay.push(Bytes::from(score.to_string()));
        replay.push(member);
    }
    let replay: Vec<&[u8]> = replay.iter().map(|a| a.as_ref()).collect();
    ctx.replay_as(&replay);
    Ok(reply)
}

fn zset_of(ctx: &mut Ctx<'_>, key: &[u8]) -> CmdResult<Option<Collection>> {
    Ok(ctx.txn.collection(ctx.db(), key, ValueType::ZSet)?)
}

/// A member's position, if it is in the set.
fn member_position(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &Collection,
    member: &[u8],
) -> CmdResult<Option<[f64; 2]>> {
    let score = ctx.txn.zset_score(ctx.db(), key, coll, member)?;
    Ok(score.map(geohash::decode_score))
}

/// GEODIST key member1 member2 [unit]
fn geodist(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let to_meters = match args.len() {
        4 => 1.0,
        5 => unit_arg(&args[4])?,
        _ => return Err(CmdError::Static(SYNTAX)),
    };
    let key = &args[1];
    let Some(coll) = zset_of(ctx, key)? else {
        return Ok(Reply::Null);
    };
    let first = member_position(ctx, key, &coll, &args[2])?;
    let second = member_position(ctx, key, &coll, &args[3])?;
    let (Some(a), Some(b)) = (first, second) else {
        return Ok(Reply::Null);
    };
    let meters = geohash::distance(a[0], a[1], b[0], b[1]);
    Ok(Reply::Bulk(Bytes::from(geohash::format_distance(
        meters / to_meters,
    ))))
}

/// GEOHASH key member ...: 11-character standard geohashes.
fn geohash_cmd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let coll = zset_of(ctx, key)?;
    let mut out = Vec::with_capacity(args.len() - 2);
    for member in &args[2..] {
        let score = match &coll {
            Some(coll) => ctx.txn.zset_score(ctx.db(), key, coll, member)?,
            None => None,
        };
        out.push(match score {
            Some(score) => Reply::Bulk(Bytes::copy_from_slice(&geohash::geohash_string(score))),
            None => Reply::Null,
        });
    }
    Ok(Reply::Array(out))
}

fn coordinates_reply([longitude, latitude]: [f64; 2]) -> Reply {
    Reply::Array(vec![
        Reply::DoubleText(Bytes::from(geohash::format_coordinate(longitude))),
        Reply::DoubleText(Bytes::from(geohash::format_coordinate(latitude))),
    ])
}

/// GEOPOS key member ...
fn geopos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let coll = zset_of(ctx, key)?;
    let mut out = Vec::with_capacity(args.len() - 2);
    for member in &args[2..] {
        let position = match &coll {
            Some(coll) => member_position(ctx, key, coll, member)?,
            None => None,
        };
        out.push(position.map_or(Reply::NullArray, coordinates_reply));
    }
    Ok(Reply::Array(out))
}

// ---------------------------------------------------------------------------
// GEOSEARCH, GEOSEARCHSTORE, GEORADIUS*
// ---------------------------------------------------------------------------

/// Which command of georadiusGeneric is running.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// GEORADIUS / GEORADIUS_RO (`read_only`: no STORE).
    Radius {
        read_only: bool,
    },
    /// GEORADIUSBYMEMBER / GEORADIUSBYMEMBER_RO.
    ByMember {
        read_only: bool,
    },
    Search,
    SearchStore,
}

impl Variant {
    fn is_search(self) -> bool {
        matches!(self, Variant::Search | Variant::SearchStore)
    }

    fn accepts_store(self) -> bool {
        matches!(
            self,
            Variant::Radius { read_only: false } | Variant::ByMember { read_only: false }
        )
    }
}

fn georadius(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search_generic(ctx, args, 1, Variant::Radius { read_only: false })
}

fn georadius_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search_generic(ctx, args, 1, Variant::Radius { read_only: true })
}

fn georadiusbymember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search_generic(ctx, args, 1, Variant::ByMember { read_only: false })
}

fn georadiusbymember_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search_generic(ctx, args, 1, Variant::ByMember { read_only: true })
}

fn geosearch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search_generic(ctx, args, 1, Variant::Search)
}

fn geosearchstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    search_generic(ctx, args, 2, Variant::SearchStore)
}

#[derive(Clone, Copy, PartialEq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// One member found inside the shape (Redis's geoPoint).
#[derive(Clone)]
struct Point {
    member: Bytes,
    score: f64,
    position: [f64; 2],
    /// In meters until the reply converts it to the request's unit.
    distance: f64,
}

/// sort_gp_asc: `>` is after, `==` equal, anything else (NaN) before.
fn by_distance(a: &Point, b: &Point) -> Ordering {
    if a.distance > b.distance {
        Ordering::Greater
    } else if a.distance == b.distance {
        Ordering::Equal
    } else {
        Ordering::Less
    }
}

/// georadiusGeneric: the argument rules and error order of geo.c, then
/// the cell search, the sort and the reply or the stored set.
fn search_generic(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    src_index: usize,
    variant: Variant,
) -> CmdResult {
    let src = &args[src_index];
    let store_event = match variant {
        Variant::SearchStore => "geosearchstore",
        _ => "georadiusstore",
    };
    // The source is read as Redis's lookupKeyRead (a keymiss), even by
    // the STORE forms.
    ctx.txn.set_read_lookups(true);
    let coll = zset_of(ctx, src)?;
    ctx.txn.set_read_lookups(false);
    let mut center: Option<[f64; 2]> = None;
    let mut kind: Option<ShapeKind> = None;
    let mut conversion = 1.0;
    let mut store_key: Option<&Bytes> = None;
    let base_args = match variant {
        Variant::Radius { .. } => {
            center = Some(lon_lat_arg(&args[2], &args[3])?);
            let (radius, to_meters) = radius_args(&args[4], &args[5])?;
            kind = Some(ShapeKind::Circle { radius });
            conversion = to_meters;
            6
        }
        // Without the key the radius is not even parsed: the reply is
        // empty whatever it says (only the options are checked).
        Variant::ByMember { .. } if coll.is_none() => 5,
        Variant::ByMember { .. } => {
            let from = match &coll {
                Some(coll) => member_position(ctx, src, coll, &args[2])?,
                None => None,
            };
            center = Some(from.ok_or(CmdError::Static(UNDECODABLE_MEMBER))?);
            let (radius, to_meters) = radius_args(&args[3], &args[4])?;
            kind = Some(ShapeKind::Circle { radius });
            conversion = to_meters;
            5
        }
        Variant::Search => 2,
        Variant::SearchStore => {
            store_key = Some(&args[1]);
            3
        }
    };

    let (mut withdist, mut withhash, mut withcoord) = (false, false, false);
    let (mut frommember, mut fromlonlat, mut byradius, mut bybox) = (false, false, false, false);
    let mut sort = Sort::None;
    let mut any = false;
    let mut count: i64 = 0;
    let mut storedist = false;
    let options = args.get(base_args..).unwrap_or_default();
    let remaining = options.len();
    let mut i = 0;
    while i < remaining {
        let arg = &options[i];
        if c_is(arg, "withdist") {
            withdist = true;
        } else if c_is(arg, "withhash") {
            withhash = true;
        } else if c_is(arg, "withcoord") {
            withcoord = true;
        } else if c_is(arg, "any") {
            any = true;
        } else if c_is(arg, "asc") {
            sort = Sort::Asc;
        } else if c_is(arg, "desc") {
            sort = Sort::Desc;
        } else if c_is(arg, "count") && i + 1 < remaining {
            count = parse_i64(&options[i + 1]).ok_or(CmdError::Static(NOT_INTEGER))?;
            if count <= 0 {
                return Err(CmdError::Static("ERR COUNT must be > 0"));
            }
            i += 1;
        } else if (c_is(arg, "store") || c_is(arg, "storedist"))
            && i + 1 < remaining
            && variant.accepts_store()
        {
            store_key = Some(&options[i + 1]);
            storedist = c_is(arg, "storedist");
            i += 1;
        } else if c_is(arg, "storedist") && variant == Variant::SearchStore {
            storedist = true;
        } else if c_is(arg, "frommember") && i + 1 < remaining && variant.is_search() && !fromlonlat
        {
            if let Some(coll) = &coll {
                let from = member_position(ctx, src, coll, &options[i + 1])?;
                center = Some(from.ok_or(CmdError::Static(UNDECODABLE_MEMBER))?);
            }
            frommember = true;
            i += 1;
        } else if c_is(arg, "fromlonlat") && i + 2 < remaining && variant.is_search() && !frommember
        {
            center = Some(lon_lat_arg(&options[i + 1], &options[i + 2])?);
            fromlonlat = true;
            i += 2;
        } else if c_is(arg, "byradius") && i + 2 < remaining && variant.is_search() && !bybox {
            let (radius, to_meters) = radius_args(&options[i + 1], &options[i + 2])?;
            kind = Some(ShapeKind::Circle { radius });
            conversion = to_meters;
            byradius = true;
            i += 2;
        } else if c_is(arg, "bybox") && i + 3 < remaining && variant.is_search() && !byradius {
            let (width, height, to_meters) =
                box_args(&options[i + 1], &options[i + 2], &options[i + 3])?;
            kind = Some(ShapeKind::Rectangle { width, height });
            conversion = to_meters;
            bybox = true;
            i += 3;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        i += 1;
    }

    if store_key.is_some() && (withdist || withhash || withcoord) {
        return Err(CmdError::Static(if variant == Variant::SearchStore {
            "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        } else {
            "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        }));
    }
    if variant.is_search() && !(frommember || fromlonlat) {
        return Err(name_error(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ",
            &args[0],
        ));
    }
    if variant.is_search() && !(byradius || bybox) {
        return Err(name_error(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for ",
            &args[0],
        ));
    }
    if any && count == 0 {
        return Err(CmdError::Static(
            "ERR the ANY argument requires COUNT argument",
        ));
    }

    let (Some(coll), Some(center), Some(kind)) = (coll, center, kind) else {
        // No source key: an empty result (a STORE deletes its target).
        return match store_key {
            Some(dst) => {
                super::zsets::store_zset(ctx, dst, Vec::new(), store_event, 0)?;
                Ok(Reply::Integer(0))
            }
            None => Ok(Reply::Array(Vec::new())),
        };
    };
    if count != 0 && sort == Sort::None && !any {
        sort = Sort::Asc;
    }
    let shape = Shape {
        center,
        kind,
        conversion,
    };
    let limit = if any { count as u64 } else { 0 };
    let mut points = points_in_shape(ctx, src, &coll, &shape, limit)?;
    if points.is_empty() && store_key.is_none() {
        return Ok(Reply::Array(Vec::new()));
    }

    let returned = if count == 0 {
        points.len()
    } else {
        points.len().min(count as usize)
    };
    match sort {
        Sort::None => {}
        Sort::Asc if returned == points.len() => geohash::glibc_qsort(&mut points, &by_distance),
        Sort::Desc if returned == points.len() => {
            geohash::glibc_qsort(&mut points, &|a: &Point, b: &Point| {
                by_distance(a, b).reverse()
            })
        }
        Sort::Asc => geohash::pqsort(&mut points, &by_distance, 0, returned - 1),
        Sort::Desc => geohash::pqsort(
            &mut points,
            &|a: &Point, b: &Point| by_distance(a, b).reverse(),
            0,
            returned - 1,
        ),
    }
    points.truncate(returned);
    for point in &mut points {
        point.distance /= conversion;
    }

    if let Some(dst) = store_key {
        let mut seen = std::collections::HashSet::with_capacity(points.len());
        let items: Vec<(Bytes, f64)> = points
            .into_iter()
            .filter(|p| seen.insert(p.member.clone()))
            .map(|p| {
                let score = if storedist { p.distance } else { p.score };
                (p.member, score)
            })
            .collect();
        super::zsets::store_zset(ctx, dst, items, store_event, returned as u64)?;
        return Ok(Reply::Integer(returned as i64));
    }
    let with_options = withdist || withhash || withcoord;
    let out = points
        .into_iter()
        .map(|point| {
            let member = Reply::Bulk(point.member);
            if !with_options {
                return member;
            }
            let mut entry = vec![member];
            if withdist {
                entry.push(Reply::Bulk(Bytes::from(geohash::format_distance(
                    point.distance,
                ))));
            }
            if withhash {
                entry.push(Reply::Integer(geohash::c_double_to_i64(point.score)));
            }
            if withcoord {
                entry.push(coordinates_reply(point.position));
            }
            Reply::Array(entry)
        })
        .collect();
    Ok(Reply::Array(out))
}

/// An error naming the command as the client spelled it (Redis formats
/// `c->argv[0]` into these).
fn name_error(prefix: &str, name: &[u8]) -> CmdError {
    let mut text = prefix.as_bytes().to_vec();
    text.extend_from_slice(name);
    CmdError::Text(Bytes::from(text))
}

/// membersOfAllNeighbors: the members of each search cell (a score range
/// `[min, max)` of the index) that lie inside the shape, stopping once
/// `limit` (ANY's COUNT; 0: no limit) are found. On a network thread a
/// walk past [`INLINE_MEMBERS`] entries moves the command to the pool.
fn points_in_shape(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &Collection,
    shape: &Shape,
    limit: u64,
) -> CmdResult<Vec<Point>> {
    let mut budget = match ctx.txn.mode() {
        ReadMode::MemoryOnly => INLINE_MEMBERS,
        _ => u64::MAX,
    };
    let mut exceeded = false;
    let mut points: Vec<Point> = Vec::new();
    let db = ctx.db();
    let full = |points: &Vec<Point>| limit > 0 && points.len() as u64 >= limit;
    for cell in shape.search_cells() {
        if full(&points) {
            break;
        }
        let (min, max) = cell.score_range();
        let range = ScoreRange {
            min: min as f64,
            min_exclusive: false,
            max: max as f64,
            max_exclusive: true,
        };
        ctx.txn
            .zset_scan_scores(db, key, coll, &range, false, |member, score| {
                if budget == 0 {
                    exceeded = true;
                    return false;
                }
                budget -= 1;
                let position = geohash::decode_score(score);
                if let Some(distance) = shape.distance_if_inside(position) {
                    points.push(Point {
                        member: Bytes::copy_from_slice(member),
                        score,
                        position,
                        distance,
                    });
                }
                !full(&points)
            })?;
        if exceeded {
            off_thread_if(ctx, u64::MAX)?;
            return Err(CmdError::Storage(StorageError::Incomplete));
        }
    }
    Ok(points)
}
