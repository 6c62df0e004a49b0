//! Client-side caching commands: CLIENT TRACKING, CLIENT CACHING, CLIENT
//! GETREDIR and CLIENT TRACKINGINFO, with Redis 7.0's option checks and
//! error texts. The table and the invalidations live in `crate::tracking`.

use bytes::Bytes;
use firn_resp::Reply;

use crate::args::{is, parse_i64};
use crate::commands::{def, Ctx, Def, Traits};
use crate::errors::{CmdError, CmdResult, NOT_INTEGER, SYNTAX};
use crate::tracking::state as tracking;
use crate::tracking::table::{TrackingOptions, BCAST, BROKEN_REDIRECT, NOLOOP, OPTIN, OPTOUT};

pub const COMMANDS: &[Def] = &[
    def("client|tracking", client_tracking).with(Traits::KEEPS_CACHING),
    def("client|caching", client_caching).with(Traits::KEEPS_CACHING),
    def("client|getredir", client_getredir).with(Traits::KEEPS_CACHING),
    def("client|trackinginfo", client_trackinginfo).with(Traits::KEEPS_CACHING),
];

/// Two prefixes overlap when one starts with the other.
fn overlaps(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// Redis's checkPrefixCollisionsOrReply.
fn check_prefixes(existing: &[Bytes], given: &[Bytes]) -> CmdResult<()> {
    for (i, prefix) in given.iter().enumerate() {
        if let Some(old) = existing.iter().find(|old| overlaps(old, prefix)) {
            return Err(CmdError::Owned(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                String::from_utf8_lossy(prefix),
                String::from_utf8_lossy(old)
            )));
        }
        if let Some(other) = given[i + 1..].iter().find(|o| overlaps(prefix, o)) {
            return Err(CmdError::Owned(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                String::from_utf8_lossy(prefix),
                String::from_utf8_lossy(other)
            )));
        }
    }
    Ok(())
}

fn client_tracking(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut redirect = 0u64;
    let mut flags = 0u8;
    let mut prefixes: Vec<Bytes> = Vec::new();
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        let option = &args[j];
        if is(option, "redirect") && more {
            j += 1;
            if redirect != 0 {
                return Err(CmdError::Static(
                    "ERR A client can only redirect to a single other client",
                ));
            }
            let id = parse_i64(&args[j]).ok_or(CmdError::Static(NOT_INTEGER))?;
            let exists = u64::try_from(id)
                .ok()
                .is_some_and(|id| ctx.server.clients.lock().contains_key(&id));
            if !exists {
                return Err(CmdError::Static(
                    "ERR The client ID you want redirect to does not exist",
                ));
            }
            redirect = id as u64;
        } else if is(option, "bcast") {
            flags |= BCAST;
        } else if is(option, "optin") {
            flags |= OPTIN;
        } else if is(option, "optout") {
            flags |= OPTOUT;
        } else if is(option, "noloop") {
            flags |= NOLOOP;
        } else if is(option, "prefix") && more {
            j += 1;
            prefixes.push(args[j].clone());
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        j += 1;
    }
    let mine = &ctx.client.tracking;
    if is(&args[2], "on") {
        if flags & BCAST == 0 && !prefixes.is_empty() {
            return Err(CmdError::Static(
                "ERR PREFIX option requires BCAST mode to be enabled",
            ));
        }
        let old = mine.flags();
        if mine.is_on() && (old & BCAST) != (flags & BCAST) {
            return Err(CmdError::Static("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."));
        }
        if flags & BCAST != 0 && flags & (OPTIN | OPTOUT) != 0 {
            return Err(CmdError::Static(
                "ERR OPTIN and OPTOUT are not compatible with BCAST",
            ));
        }
        if flags & OPTIN != 0 && flags & OPTOUT != 0 {
            return Err(CmdError::Static(
                "ERR You can't specify both OPTIN mode and OPTOUT mode",
            ));
        }
        if (flags & OPTIN != 0 && old & OPTOUT != 0) || (flags & OPTOUT != 0 && old & OPTIN != 0) {
            return Err(CmdError::Static("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."));
        }
        if flags & BCAST != 0 {
            check_prefixes(&mine.prefixes(), &prefixes)?;
        }
        tracking::enable(
            ctx.server,
            ctx.client,
            TrackingOptions {
                redirect,
                flags,
                prefixes,
            },
        );
    } else if is(&args[2], "off") {
        tracking::disable(ctx.server, ctx.client);
    } else {
        return Err(CmdError::Static(SYNTAX));
    }
    Ok(Reply::ok())
}

fn client_caching(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mine = &ctx.client.tracking;
    if !mine.is_on() {
        return Err(CmdError::Static("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"));
    }
    let flags = mine.flags();
    if is(&args[2], "yes") {
        if flags & OPTIN == 0 {
            return Err(CmdError::Static(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            ));
        }
    } else if is(&args[2], "no") {
        if flags & OPTOUT == 0 {
            return Err(CmdError::Static(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            ));
        }
    } else {
        return Err(CmdError::Static(SYNTAX));
    }
    mine.set_caching();
    Ok(Reply::ok())
}

fn client_getredir(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let mine = &ctx.client.tracking;
    Ok(Reply::Integer(if mine.is_on() {
        mine.redirect() as i64
    } else {
        -1
    }))
}

fn client_trackinginfo(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let mine = &ctx.client.tracking;
    let on = mine.is_on();
    let flags = mine.flags();
    let word = |w: &'static str| Reply::Bulk(Bytes::from_static(w.as_bytes()));
    let mut listed = vec![word(if on { "on" } else { "off" })];
    if flags & BCAST != 0 {
        listed.push(word("bcast"));
    }
    if flags & OPTIN != 0 {
        listed.push(word("optin"));
        if mine.caching() {
            listed.push(word("caching-yes"));
        }
    }
    if flags & OPTOUT != 0 {
        listed.push(word("optout"));
        if mine.caching() {
            listed.push(word("caching-no"));
        }
    }
    if flags & NOLOOP != 0 {
        listed.push(word("noloop"));
    }
    if flags & BROKEN_REDIRECT != 0 {
        listed.push(word("broken_redirect"));
    }
    Ok(Reply::Map(vec![
        (word("flags"), Reply::Set(listed)),
        (
            word("redirect"),
            Reply::Integer(if on { mine.redirect() as i64 } else { -1 }),
        ),
        (
            word("prefixes"),
            Reply::Array(mine.prefixes().into_iter().map(Reply::Bulk).collect()),
        ),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_overlap_when_one_starts_with_the_other() {
        assert!(overlaps(b"a", b"ab"));
        assert!(overlaps(b"ab", b"a"));
        assert!(overlaps(b"", b"x"));
        assert!(!overlaps(b"ab", b"ac"));
        let b = |s: &str| Bytes::copy_from_slice(s.as_bytes());
        assert!(check_prefixes(&[b("user:")], &[b("us")]).is_err());
        assert!(check_prefixes(&[], &[b("a"), b("b"), b("ab")]).is_err());
        assert!(check_prefixes(&[b("x")], &[b("a"), b("b")]).is_ok());
    }
}
