//! Pub/Sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH
//! and PUBSUB. The registry and delivery live in `crate::pubsub`.
//!
//! (Un)subscribe confirmations are not the command's reply: they are
//! queued in the client's mailbox in order with the messages (one per
//! channel, as Redis sends them), and the command itself replies nothing
//! ([`Deferred::Silent`]).

use bytes::Bytes;
use firn_resp::Reply;

use crate::commands::replies::help_reply;
use crate::commands::{def, Channels, Ctx, Def, Deferred, Traits};
use crate::effects::SideEffect;
use crate::errors::{subcommand_syntax, CmdResult};
use crate::pubsub::deliver::{publish as publish_message, spublish as spublish_message};
use crate::pubsub::state::Kind;

pub const COMMANDS: &[Def] = &[
    def("subscribe", subscribe)
        .with(Traits::SUBSCRIBED_OK)
        .names_channels(Channels::Subscribe),
    def("psubscribe", psubscribe)
        .with(Traits::SUBSCRIBED_OK)
        .names_channels(Channels::SubscribePatterns),
    def("ssubscribe", ssubscribe)
        .with(Traits::SUBSCRIBED_OK)
        .names_channels(Channels::Subscribe),
    def("unsubscribe", unsubscribe).with(Traits::SUBSCRIBED_OK),
    def("punsubscribe", punsubscribe).with(Traits::SUBSCRIBED_OK),
    def("sunsubscribe", sunsubscribe).with(Traits::SUBSCRIBED_OK),
    def("publish", publish).names_channels(Channels::Publish),
    def("spublish", spublish).names_channels(Channels::Publish),
    def("pubsub|channels", pubsub_channels),
    def("pubsub|shardchannels", pubsub_shardchannels),
    def("pubsub|numsub", pubsub_numsub),
    def("pubsub|shardnumsub", pubsub_shardnumsub),
    def("pubsub|numpat", pubsub_numpat),
    def("pubsub|help", pubsub_help),
];

fn subscribe_to(ctx: &mut Ctx<'_>, kind: Kind, names: &[Bytes]) -> CmdResult {
    for name in names {
        ctx.server.pubsub.subscribe(ctx.client, kind, name);
    }
    ctx.deferred = Some(Deferred::Silent);
    Ok(Reply::Null)
}

fn unsubscribe_from(ctx: &mut Ctx<'_>, kind: Kind, names: &[Bytes]) -> CmdResult {
    ctx.server.pubsub.unsubscribe(ctx.client, kind, names);
    ctx.deferred = Some(Deferred::Silent);
    Ok(Reply::Null)
}

fn subscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_to(ctx, Kind::Channel, &args[1..])
}

fn psubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_to(ctx, Kind::Pattern, &args[1..])
}

fn ssubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_to(ctx, Kind::Shard, &args[1..])
}

fn unsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_from(ctx, Kind::Channel, &args[1..])
}

fn punsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_from(ctx, Kind::Pattern, &args[1..])
}

fn sunsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_from(ctx, Kind::Shard, &args[1..])
}

fn publish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    publish_generic(ctx, args, false)
}

fn spublish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    publish_generic(ctx, args, true)
}

/// PUBLISH/SPUBLISH. Alone it delivers at once (it reads no data, so it
/// never runs twice); inside EXEC or a script the message waits for the
/// unit's commit, which may come after runs that are thrown away.
fn publish_generic(ctx: &mut Ctx<'_>, args: &[Bytes], sharded: bool) -> CmdResult {
    let (channel, message) = (&args[1], &args[2]);
    let receivers = if ctx.in_unit {
        ctx.effects.push(SideEffect::Publish {
            channel: channel.clone(),
            message: message.clone(),
            sharded,
        });
        ctx.server.pubsub.receivers(channel, sharded)
    } else if sharded {
        spublish_message(ctx.server, channel, message)
    } else {
        publish_message(ctx.server, channel, message)
    };
    Ok(Reply::Integer(receivers as i64))
}

fn active_channels(ctx: &mut Ctx<'_>, args: &[Bytes], shard: bool) -> CmdResult {
    if args.len() > 3 {
        return Err(subcommand_syntax("pubsub", &args[1]));
    }
    let names = ctx
        .server
        .pubsub
        .active(shard, args.get(2).map(|p| p.as_ref()));
    Ok(Reply::Array(names.into_iter().map(Reply::Bulk).collect()))
}

fn pubsub_channels(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    active_channels(ctx, args, false)
}

fn pubsub_shardchannels(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    active_channels(ctx, args, true)
}

fn subscriber_counts(ctx: &mut Ctx<'_>, args: &[Bytes], shard: bool) -> CmdResult {
    let mut out = Vec::with_capacity((args.len() - 2) * 2);
    for name in &args[2..] {
        out.push(Reply::Bulk(name.clone()));
        let count = ctx.server.pubsub.subscriber_count(shard, name);
        out.push(Reply::Integer(count as i64));
    }
    Ok(Reply::Array(out))
}

fn pubsub_numsub(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscriber_counts(ctx, args, false)
}

fn pubsub_shardnumsub(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscriber_counts(ctx, args, true)
}

fn pubsub_numpat(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(ctx.server.pubsub.pattern_count() as i64))
}

const PUBSUB_HELP: &[&str] = &[
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
];

fn pubsub_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(PUBSUB_HELP))
}
