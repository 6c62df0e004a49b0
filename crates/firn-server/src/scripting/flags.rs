//! The flags a script or function declares (`#!lua flags=...`,
//! `redis.register_function{flags=...}`), and what they make of the
//! command's own flags.

use crate::command_table::Flags;

/// Script-visible flags of a script or function (`#!lua flags=...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// No shebang: Redis's backwards-compatible EVAL mode.
    pub compat: bool,
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot: bool,
}

impl ScriptFlags {
    /// Sets the flag named `name`; false if there is no such flag.
    pub fn set(&mut self, name: &str) -> bool {
        match name {
            "no-writes" => self.no_writes = true,
            "allow-oom" => self.allow_oom = true,
            "allow-stale" => self.allow_stale = true,
            "no-cluster" => self.no_cluster = true,
            "allow-cross-slot-keys" => self.allow_cross_slot = true,
            _ => return false,
        }
        true
    }

    /// The flag names, in Redis's order (FUNCTION LIST).
    pub fn names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (on, name) in [
            (self.no_writes, "no-writes"),
            (self.allow_oom, "allow-oom"),
            (self.allow_stale, "allow-stale"),
            (self.no_cluster, "no-cluster"),
            (self.allow_cross_slot, "allow-cross-slot-keys"),
        ] {
            if on {
                out.push(name);
            }
        }
        out
    }
}

/// Redis's `evalExtractShebangFlags`: the flags, and how many bytes the
/// shebang line takes (its line break is kept).
pub fn shebang_flags(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    let mut flags = ScriptFlags {
        compat: true,
        ..ScriptFlags::default()
    };
    if !body.starts_with(b"#!") {
        return Ok((flags, 0));
    }
    let Some(end) = memchr::memchr(b'\n', body) else {
        return Err("Invalid script shebang".into());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let parts: Vec<&str> = line.split_ascii_whitespace().collect();
    let Some(engine) = parts.first() else {
        return Err("Invalid engine in script shebang".into());
    };
    if *engine != "#!lua" {
        return Err(format!("Unexpected engine in script shebang: {engine}"));
    }
    flags.compat = false;
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("Unknown lua shebang option: {part}"));
        };
        // Redis splits with sdssplitlen: an empty list has no flags.
        for name in list.split(',').filter(|_| !list.is_empty()) {
            if !flags.set(name) {
                return Err(format!("Unexpected flag in script shebang: {name}"));
            }
        }
    }
    Ok((flags, end))
}

/// The flags of an EVAL or FCALL that runs a script declaring `script`
/// (Redis's scriptFlagsToCmdFlags): the declared flags replace the
/// command's write, deny-OOM, stale and may-replicate flags; a script
/// without a shebang keeps the command's.
pub fn command_flags(command: Flags, script: ScriptFlags) -> Flags {
    if script.compat {
        return command;
    }
    let mut flags = command.without(
        Flags::STALE
            .with(Flags::DENYOOM)
            .with(Flags::WRITE)
            .with(Flags::MAY_REPLICATE),
    );
    if !script.allow_oom && !script.no_writes {
        flags = flags.with(Flags::DENYOOM);
    }
    if !script.no_writes {
        flags = flags.with(Flags::WRITE);
    }
    if script.allow_stale {
        flags = flags.with(Flags::STALE);
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags_of(body: &str) -> Flags {
        let eval = Flags::NOSCRIPT
            .with(Flags::MAY_REPLICATE)
            .with(Flags::STALE);
        let (script, _) = shebang_flags(body.as_bytes()).expect("a valid shebang");
        command_flags(eval, script)
    }

    #[test]
    fn declared_flags_replace_evals_own() {
        let compat = flags_of("return 1");
        assert!(compat.contains(Flags::MAY_REPLICATE) && compat.contains(Flags::STALE));
        let writes = flags_of("#!lua\nreturn 1");
        assert!(writes.contains(Flags::WRITE.with(Flags::DENYOOM)));
        assert!(!writes.contains(Flags::MAY_REPLICATE) && !writes.contains(Flags::STALE));
        let reads = flags_of("#!lua flags=no-writes,allow-stale\nreturn 1");
        assert!(!reads.contains(Flags::WRITE) && !reads.contains(Flags::DENYOOM));
        assert!(!reads.contains(Flags::MAY_REPLICATE) && reads.contains(Flags::STALE));
    }
}
