//! Differential tests of ACL against redis-server 7.0.15: ACL SETUSER and
//! its errors, GETUSER and LIST descriptions, CAT, WHOAMI, USERS, DRYRUN,
//! GENPASS, LOG entries, AUTH and HELLO AUTH as a user, NOPERM refusals of
//! commands, keys and channels, and the same checks inside MULTI (at queue
//! time and again at EXEC), in scripts, for users changed or deleted while
//! their connections are open, and CLIENT KILL USER.
//!
//! Normalised: ACL LOG's `age-seconds` and the volatile fields of its
//! `client-info` (ids, addresses, ages, memory); ACL GENPASS's random hex
//! (its length is compared).

use firn_testkit::{reply::assert_err_prefix, Diff, R};

/// Redis lists a user's single-command rules (`+get -set`) in the order of
/// its command dict, which a random seed shuffles per process: runs of
/// them are sorted in every bulk string (GETUSER's `commands`, LIST's
/// lines). Which rules, and the categories before them, are compared as
/// they are.
/// Firn's own commands in categories Redis's ACL CAT lists (MEMORY TIERS
/// reads a key, as MEMORY USAGE; SLOWLOG COLD* are admin's, as SLOWLOG's).
const FIRN_ONLY: &[&str] = &[
    "memory|tiers",
    "slowlog|coldget",
    "slowlog|coldlen",
    "slowlog|coldreset",
];

/// ACL CAT's commands without Firn's own.
fn without_firn_only(r: &R) -> R {
    match r {
        R::Array(Some(items)) => R::Array(Some(
            items
                .iter()
                .filter(|i| !FIRN_ONLY.iter().any(|c| i.as_bytes() == Some(c.as_bytes())))
                .cloned()
                .collect(),
        )),
        other => other.clone(),
    }
}

fn rules_normalised(r: &R) -> R {
    match r {
        R::Bulk(Some(b)) => {
            let text = String::from_utf8_lossy(b);
            let mut out: Vec<String> = Vec::new();
            let mut run: Vec<String> = Vec::new();
            for token in text.split(' ') {
                let single = (token.starts_with('+') || token.starts_with('-'))
                    && !token.starts_with("+@")
                    && !token.starts_with("-@");
                // Firn's own commands are not Redis's to list.
                if FIRN_ONLY.iter().any(|c| token.get(1..) == Some(*c)) {
                    continue;
                }
                if single {
                    run.push(token.trim_end_matches(')').to_string());
                    if token.ends_with(')') {
                        run.sort();
                        out.append(&mut run);
                        out.push(")".into());
                    }
                    continue;
                }
                run.sort();
                out.append(&mut run);
                out.push(token.to_string());
            }
            run.sort();
            out.append(&mut run);
            R::Bulk(Some(out.join(" ").into_bytes()))
        }
        R::Array(Some(items)) => R::Array(Some(items.iter().map(rules_normalised).collect())),
        R::Map(pairs) => R::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), rules_normalised(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn getuser(d: &mut Diff, name: &str) -> R {
    d.cmd_with(&["ACL", "GETUSER", name], rules_normalised)
}

fn list(d: &mut Diff) -> R {
    d.cmd_with(&["ACL", "LIST"], rules_normalised)
}

fn setuser(d: &mut Diff, rules: &[&str]) -> R {
    let mut args = vec!["ACL", "SETUSER"];
    args.extend_from_slice(rules);
    d.cmd(&args)
}

#[test]
fn setuser_getuser_and_list_describe_users_as_redis() {
    let mut d = Diff::new();
    d.cmd(&["ACL", "USERS"]);
    list(&mut d);
    getuser(&mut d, "default");
    getuser(&mut d, "nobody");
    for rules in [
        &["u1"][..],
        &["u2", "on", ">pass1", ">pass2", "~key*", "+get", "+set"],
        &[
            "u3",
            "on",
            "nopass",
            "allkeys",
            "allchannels",
            "allcommands",
        ],
        &[
            "u4",
            "on",
            "#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
        ],
        &["u5", "+@all", "-@dangerous", "-debug", "~*", "&chan*"],
        &[
            "u6", "-@all", "+@read", "-@hash", "+hget", "%R~r*", "%W~w*", "%RW~rw*",
        ],
        &["u7", "+config|get", "+client|id", "+select|0", "+select|1"],
        &["u8", "+@all", "-config|set", "-client"],
        &["u9", "on", "(+get ~sel*)", "(+set", "~other*", "&ch)"],
        &["u10", "+@hash", "+@set", "+@sortedset", "-hdel"],
        &["u11", "resetchannels", "&a", "&b", "&a"],
        &["u12", "on", ">p", "<p", "skip-sanitize-payload"],
        &["u13", "on", "+@all", "nocommands", "+ping"],
        &["u14", "+@string", "-@write"],
    ] {
        setuser(&mut d, rules);
        getuser(&mut d, rules[0]);
    }
    list(&mut d);
    d.cmd(&["ACL", "USERS"]);
    // Changing an existing user keeps what the rules do not touch.
    setuser(&mut d, &["u2", "-get", "resetkeys", "~other"]);
    getuser(&mut d, "u2");
    setuser(&mut d, &["u9", "clearselectors"]);
    getuser(&mut d, "u9");
    setuser(&mut d, &["u5", "reset"]);
    getuser(&mut d, "u5");
    list(&mut d);
}

#[test]
fn setuser_errors_change_nothing() {
    let mut d = Diff::new();
    setuser(&mut d, &["keep", "on", ">p", "+get"]);
    for rules in [
        &["keep", "off", "+nosuchcommand"][..],
        &["keep", "+@nosuchcategory"],
        &["keep", "bogus"],
        &["keep", "<notapassword"],
        &["keep", "#tooshort"],
        &["keep", "!tooshort"],
        &["keep", "~*", "~more"],
        &["keep", "&*", "&more"],
        &["keep", "+config|get|x"],
        &["keep", "+get|"],
        &["keep", "(+get"],
        &["keep", "on", "(+get", "~k"],
        &["keep", "(+nosuch)"],
        &["keep", "%X~k"],
        &["has space", "on"],
        &["keep", "-select|0"],
    ] {
        setuser(&mut d, rules);
    }
    getuser(&mut d, "keep");
    d.cmd(&["ACL", "SETUSER"]);
    d.cmd(&["ACL", "GETUSER"]);
    d.cmd(&["ACL", "NOSUCH"]);
    d.cmd(&["ACL", "WHOAMI", "extra"]);
}

#[test]
fn cat_whoami_help_dryrun_genpass() {
    let mut d = Diff::new();
    d.cmd(&["ACL", "CAT"]);
    for category in [
        "read",
        "WRITE",
        "dangerous",
        "scripting",
        "pubsub",
        "keyspace",
        "nosuch",
    ] {
        d.cmd_with(&["ACL", "CAT", category], |r| without_firn_only(r).sorted());
    }
    d.cmd(&["ACL", "WHOAMI"]);
    d.cmd(&["ACL", "HELP"]);
    setuser(&mut d, &["dry", "on", "+get", "+publish", "~k*", "&c*"]);
    for line in [
        &["ACL", "DRYRUN", "dry", "GET", "k1"][..],
        &["ACL", "DRYRUN", "dry", "GET", "x"],
        &["ACL", "DRYRUN", "dry", "SET", "k1", "v"],
        &["ACL", "DRYRUN", "dry", "PUBLISH", "c1", "m"],
        &["ACL", "DRYRUN", "dry", "PUBLISH", "x", "m"],
        &["ACL", "DRYRUN", "dry", "GET"],
        &["ACL", "DRYRUN", "dry", "NOSUCH", "x"],
        &["ACL", "DRYRUN", "nouser", "GET", "x"],
        &["ACL", "DRYRUN", "default", "FLUSHALL"],
    ] {
        d.cmd(line);
    }
    for bits in ["1", "5", "255", "4096"] {
        let (redis, firn) = d.cmd_type_only(&["ACL", "GENPASS", bits]);
        assert_eq!(
            redis.as_bytes().map(<[u8]>::len),
            firn.as_bytes().map(<[u8]>::len),
            "ACL GENPASS {bits}"
        );
    }
    d.cmd(&["ACL", "GENPASS", "0"]);
    d.cmd(&["ACL", "GENPASS", "4097"]);
    d.cmd(&["ACL", "GENPASS", "x"]);
    d.cmd(&["ACL", "LOAD"]);
    d.cmd(&["ACL", "SAVE"]);
}

#[test]
fn auth_and_hello_as_users() {
    let mut d = Diff::new();
    setuser(&mut d, &["alice", "on", ">alicepw", "+@all", "~*"]);
    setuser(&mut d, &["off-user", "off", ">pw", "+@all"]);
    setuser(&mut d, &["free", "on", "nopass", "+acl"]);
    d.cmd(&["AUTH", "alice", "wrong"]);
    d.cmd(&["AUTH", "nosuchuser", "x"]);
    d.cmd(&["AUTH", "off-user", "pw"]);
    d.cmd(&["AUTH", "onlypassword"]);
    d.cmd(&["AUTH", "alice", "alicepw"]);
    d.cmd(&["ACL", "WHOAMI"]);
    d.cmd(&["AUTH", "free", "anything at all"]);
    d.cmd(&["ACL", "WHOAMI"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["HELLO", "2", "AUTH", "alice", "bad"]);
    d.cmd(&["ACL", "WHOAMI"]);
    d.cmd(&["RESET"]);
    d.cmd(&["ACL", "WHOAMI"]);
    // The default user with a password: new connections must log in.
    d.cmd(&["ACL", "SETUSER", "default", "resetpass", ">defpw"]);
    d.reconnect();
    d.cmd(&["GET", "k"]);
    d.cmd(&["ACL", "WHOAMI"]);
    d.cmd(&["AUTH", "defpw"]);
    d.cmd(&["GET", "k"]);
    d.reconnect();
    d.cmd(&["HELLO", "2"]);
    let (redis, firn) =
        d.cmd_type_only(&["HELLO", "2", "AUTH", "alice", "alicepw", "SETNAME", "me"]);
    assert!(matches!(redis, R::Array(_)) && matches!(firn, R::Array(_)));
    d.cmd(&["ACL", "WHOAMI"]);
    d.cmd(&["CLIENT", "GETNAME"]);
    // A disabled default user: unauthenticated connections get NOAUTH.
    d.cmd(&["ACL", "SETUSER", "default", "nopass", "off"]);
    d.reconnect();
    d.cmd(&["PING"]);
    d.cmd(&["AUTH", "alice", "alicepw"]);
    d.cmd(&["PING"]);
    d.cmd(&["ACL", "SETUSER", "default", "on"]);
}

#[test]
fn noperm_for_commands_keys_and_channels() {
    let mut d = Diff::new();
    setuser(
        &mut d,
        &[
            "limited",
            "on",
            "nopass",
            "+get",
            "+set",
            "+mget",
            "+publish",
            "+subscribe",
            "+psubscribe",
            "+eval",
            "+object|encoding",
            "+select|0",
            "+sort",
            "~allowed*",
            "%R~ro*",
            "%W~wo*",
            "&news*",
        ],
    );
    d.cmd(&["AUTH", "limited", "x"]);
    for line in [
        &["GET", "allowed1"][..],
        &["GET", "forbidden"],
        &["SET", "allowed1", "v"],
        &["SET", "forbidden", "v"],
        &["GET", "ro1"],
        &["SET", "ro1", "v"],
        &["SET", "wo1", "v"],
        &["GET", "wo1"],
        &["SET", "wo1", "v", "GET"],
        &["MGET", "allowed1", "allowed2", "forbidden"],
        &["DEL", "allowed1"],
        &["OBJECT", "ENCODING", "allowed1"],
        &["OBJECT", "FREQ", "allowed1"],
        &["SELECT", "0"],
        &["SELECT", "1"],
        &["PUBLISH", "news1", "m"],
        &["PUBLISH", "sports", "m"],
        &["SORT", "allowed1", "STORE", "forbidden"],
        &["EVAL", "return 1", "1", "forbidden"],
        &["EVAL", "return 1", "1", "allowed1"],
        &["FLUSHALL"],
        &["CONFIG", "GET", "maxmemory"],
        &["NOSUCHCOMMAND"],
        &["GET"],
    ] {
        d.cmd(line);
    }
    d.cmd(&["PSUBSCRIBE", "news*", "other*"]);
    d.cmd(&["SUBSCRIBE", "news1", "sports"]);
    d.cmd(&["PSUBSCRIBE", "news*"]);
}

#[test]
fn scripts_run_as_their_caller() {
    let mut d = Diff::new();
    d.cmd(&["SET", "secret", "s"]);
    setuser(
        &mut d,
        &[
            "scripter", "on", "nopass", "+eval", "+fcall", "+get", "~mine*",
        ],
    );
    d.cmd(&["AUTH", "scripter", "x"]);
    for script in [
        "return redis.call('get', 'mine1')",
        "return redis.call('get', 'secret')",
        "return redis.call('set', 'mine1', 'v')",
        "return redis.pcall('get', 'secret')",
        "return redis.pcall('set', 'mine1', 'v')",
        "return redis.pcall('publish', 'c', 'm')",
    ] {
        d.cmd(&["EVAL", script, "0"]);
    }
}

#[test]
fn transactions_refuse_at_queue_time_and_check_again_at_exec() {
    let mut d = Diff::new();
    setuser(
        &mut d,
        &["tx", "on", "nopass", "+@all", "-flushall", "~t*", "&c"],
    );
    d.cmd(&["AUTH", "tx", "x"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "t1", "v"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["SET", "forbidden", "v"]);
    d.cmd(&["PUBLISH", "other", "m"]);
    d.cmd(&["EXEC"]);
    // Permissions lost between MULTI and EXEC: each command is checked
    // again, the allowed ones run.
    let admin = d.open_client();
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "t1", "v1"]);
    d.cmd(&["GET", "t1"]);
    d.cmd(&["SET", "t2", "v2"]);
    d.use_client(admin);
    setuser(&mut d, &["tx", "-get", "resetkeys", "~t1"]);
    d.use_client(0);
    d.cmd(&["EXEC"]);
    d.cmd(&["ACL", "LOG", "RESET"]);
}

/// The ACL LOG reply with `age-seconds` blanked and `client-info` reduced
/// to the fields that follow from the session.
fn log_normalised(r: &R) -> R {
    let R::Array(Some(entries)) = r else {
        return r.clone();
    };
    R::Array(Some(
        entries
            .iter()
            .map(|e| match e {
                R::Array(Some(fields)) => R::Array(Some(
                    fields
                        .chunks(2)
                        .flat_map(|pair| {
                            let key = pair[0].as_str().unwrap_or_default().to_string();
                            let value = match key.as_str() {
                                "age-seconds" => R::Simple("age".into()),
                                "client-info" => R::Simple(client_info_kept(&pair[1])),
                                _ => pair[1].clone(),
                            };
                            [pair[0].clone(), value]
                        })
                        .collect(),
                )),
                other => other.clone(),
            })
            .collect(),
    ))
}

fn client_info_kept(r: &R) -> String {
    const KEEP: [&str; 6] = ["name", "db", "multi", "cmd", "user", "resp"];
    let text = String::from_utf8_lossy(r.as_bytes().unwrap_or_default()).into_owned();
    firn_testkit::diff::client_line_kept(&text, &KEEP)
}

#[test]
fn acl_log_records_refusals_and_failed_logins() {
    let mut d = Diff::new();
    d.cmd(&["ACL", "LOG"]);
    setuser(
        &mut d,
        &[
            "logged", "on", ">pw", "+get", "+multi", "+exec", "+eval", "+acl", "~k*", "+publish",
            "&c",
        ],
    );
    d.cmd(&["AUTH", "logged", "bad"]);
    d.cmd(&["AUTH", "logged", "bad"]);
    d.cmd(&["AUTH", "nouser", "bad"]);
    d.cmd(&["AUTH", "logged", "pw"]);
    d.cmd(&["CLIENT", "SETNAME", "named"]);
    d.cmd(&["GET", "x1"]);
    d.cmd(&["GET", "x1"]);
    d.cmd(&["SET", "k1", "v"]);
    d.cmd(&["PUBLISH", "other", "m"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "x2"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["EVAL", "return redis.call('get', 'x3')", "0"]);
    d.cmd_with(&["ACL", "LOG"], log_normalised);
    d.cmd_with(&["ACL", "LOG", "2"], log_normalised);
    d.cmd_with(&["ACL", "LOG", "-1"], log_normalised);
    d.cmd(&["ACL", "LOG", "x"]);
    d.cmd(&["ACL", "LOG", "RESET"]);
    d.cmd(&["ACL", "LOG"]);
    // The log keeps at most acllog-max-len entries.
    d.cmd(&["AUTH", "default", "x"]);
    d.reconnect();
    d.cmd(&["CONFIG", "SET", "acllog-max-len", "2"]);
    for key in ["a", "b", "c"] {
        d.cmd(&["AUTH", key, "x"]);
    }
    d.cmd_with(&["ACL", "LOG"], log_normalised);
}

#[test]
fn live_connections_follow_their_user() {
    let mut d = Diff::new();
    setuser(&mut d, &["live", "on", "nopass", "+get", "+set", "~*"]);
    let admin = 0;
    let user = d.open_client();
    d.use_client(user);
    d.cmd(&["AUTH", "live", "x"]);
    d.cmd(&["SET", "k", "v"]);
    d.use_client(admin);
    setuser(&mut d, &["live", "-set"]);
    d.use_client(user);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["GET", "k"]);
    // `off` keeps open connections working (Redis only refuses new logins).
    d.use_client(admin);
    setuser(&mut d, &["live", "off"]);
    d.use_client(user);
    d.cmd(&["GET", "k"]);
    d.use_client(admin);
    d.cmd(&["CLIENT", "LIST", "USER", "live"]);
    d.cmd(&["CLIENT", "KILL", "USER", "nosuch"]);
    d.cmd(&["ACL", "DELUSER", "default"]);
    d.cmd(&["ACL", "DELUSER", "live", "nosuch"]);
    d.use_client(user);
    d.assert_closed_both();
}

#[test]
fn client_kill_user_and_deluser_of_own_user() {
    let mut d = Diff::new();
    setuser(&mut d, &["k1", "on", "nopass", "+@all", "~*"]);
    let victim = d.open_client();
    d.use_client(victim);
    d.cmd(&["AUTH", "k1", "x"]);
    d.use_client(0);
    d.cmd(&["CLIENT", "KILL", "USER", "k1"]);
    d.use_client(victim);
    d.assert_closed_both();
    d.use_client(0);
    d.cmd(&["AUTH", "k1", "x"]);
    // Deleting one's own user: the reply arrives, then the connection closes.
    d.cmd(&["ACL", "DELUSER", "k1"]);
    d.assert_closed_both();
}

#[test]
fn revoked_channels_close_subscribers() {
    let mut d = Diff::new();
    setuser(
        &mut d,
        &[
            "sub",
            "on",
            "nopass",
            "+@all",
            "~*",
            "resetchannels",
            "&news",
            "&sports",
        ],
    );
    let subscriber = d.open_client();
    d.use_client(subscriber);
    d.cmd(&["AUTH", "sub", "x"]);
    d.cmd(&["SUBSCRIBE", "news"]);
    d.use_client(0);
    // A superset keeps the subscriber.
    setuser(&mut d, &["sub", "&more"]);
    d.cmd(&["PUBLISH", "news", "still here"]);
    d.use_client(subscriber);
    d.read_both();
    d.use_client(0);
    setuser(&mut d, &["sub", "resetchannels", "&sports"]);
    d.use_client(subscriber);
    d.assert_closed_both();
}

#[test]
fn requirepass_is_the_default_users_password() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "SET", "requirepass", "rp"]);
    getuser(&mut d, "default");
    list(&mut d);
    d.reconnect();
    d.cmd(&["GET", "x"]);
    d.cmd(&["AUTH", "rp"]);
    d.cmd(&["CONFIG", "SET", "requirepass", ""]);
    getuser(&mut d, "default");
    d.reconnect();
    d.cmd(&["GET", "x"]);
    let r = d.cmd(&["AUTH", "x"]);
    assert_err_prefix(&r, "ERR AUTH <password> called without any password");
}

#[test]
fn dryrun_knows_every_redis_command_and_sort_patterns_need_every_key() {
    let mut d = Diff::new();
    setuser(
        &mut d,
        &[
            "mig", "on", "nopass", "+migrate", "~a*", "+sort", "+sort_ro", "+rpush",
        ],
    );
    d.cmd(&[
        "ACL", "DRYRUN", "mig", "MIGRATE", "h", "1", "a1", "0", "500",
    ]);
    d.cmd(&[
        "ACL", "DRYRUN", "mig", "MIGRATE", "h", "1", "b1", "0", "500",
    ]);
    d.cmd(&[
        "ACL", "DRYRUN", "mig", "MIGRATE", "h", "1", "", "0", "500", "KEYS", "a1", "b1",
    ]);
    d.cmd(&["ACL", "DRYRUN", "mig", "CLUSTER", "INFO"]);
    d.cmd(&["AUTH", "mig", "x"]);
    d.cmd(&["RPUSH", "alist", "2", "1", "3"]);
    d.cmd(&["SORT", "alist"]);
    d.cmd(&["SORT", "alist", "BY", "w*"]);
    d.cmd(&["SORT", "alist", "BY", "nosort"]);
    d.cmd(&["SORT", "alist", "GET", "#"]);
    d.cmd(&["SORT_RO", "alist", "GET", "o*"]);
    d.cmd(&["AUTH", "default", "x"]);
    setuser(&mut d, &["mig", "%R~*"]);
    d.cmd(&["AUTH", "mig", "x"]);
    d.cmd(&["SORT", "alist", "BY", "w*", "GET", "#"]);
}

#[test]
fn first_arguments_follow_their_command_in_descriptions() {
    let mut d = Diff::new();
    setuser(
        &mut d,
        &[
            "fa",
            "+@all",
            "-@string",
            "+incr",
            "-debug",
            "+debug|digest",
        ],
    );
    d.cmd_with(&["ACL", "GETUSER", "fa"], rules_normalised);
    // Unsorted, as each server wrote it: the first argument right after.
    let ((_, redis), (_, firn)) = d.exchange(&["ACL", "LIST"]);
    for r in [redis, firn] {
        let text = r.render();
        assert!(text.contains("-debug +debug|digest"), "{text}");
    }
}

#[test]
fn acl_file_save_and_load() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let file = |who: &str| {
        let path = dir.path().join(format!("{who}.acl"));
        std::fs::write(
            &path,
            "user alice on >alice ~* +@all\nuser default on nopass ~* &* +@all\n",
        )
        .unwrap_or_else(|e| panic!("write: {e}"));
        path.to_string_lossy().into_owned()
    };
    let (redis_file, firn_file) = (file("redis"), file("firn"));
    let mut d = Diff::with_servers(
        firn_testkit::Server::redis_with(&["--aclfile", &redis_file]),
        firn_testkit::Server::firn_with(&["--aclfile", &firn_file]),
    );
    list(&mut d);
    setuser(&mut d, &["bob", "on", ">bob", "+get", "~b*"]);
    d.cmd(&["ACL", "SAVE"]);
    assert_eq!(
        std::fs::read_to_string(&redis_file)
            .ok()
            .map(|t| t.lines().count()),
        std::fs::read_to_string(&firn_file)
            .ok()
            .map(|t| t.lines().count())
    );
    // A file with errors changes nothing, and says why.
    for (path, text) in [
        (&redis_file, "user x on\nbad line\nuser x off\n"),
        (&firn_file, "user x on\nbad line\nuser x off\n"),
    ] {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("write: {e}"));
    }
    let ((_, redis), (_, firn)) = d.exchange(&["ACL", "LOAD"]);
    for r in [&redis, &firn] {
        let text = r.render();
        assert!(text.contains(":2 should start with user keyword"), "{text}");
        assert!(
            text.contains("Duplicate user 'x' found on line 3"),
            "{text}"
        );
    }
    list(&mut d);
    // A good file replaces every user; a connection of a user that was
    // replaced is closed after the reply.
    for path in [&redis_file, &firn_file] {
        std::fs::write(path, "user carol on nopass ~* +@all\n")
            .unwrap_or_else(|e| panic!("write: {e}"));
    }
    let other = d.open_client();
    d.use_client(other);
    d.cmd(&["AUTH", "bob", "bob"]);
    d.use_client(0);
    d.cmd(&["ACL", "LOAD"]);
    list(&mut d);
    d.use_client(other);
    d.assert_closed_both();
}

#[test]
fn functions_run_as_their_caller() {
    let mut d = Diff::new();
    let library = "#!lua name=acllib\n\
        redis.register_function('getkey', function(keys, args) return redis.call('get', keys[1]) end)\n\
        redis.register_function('check', function(keys, args) return redis.acl_check_cmd(unpack(args)) end)";
    d.cmd(&["FUNCTION", "LOAD", library]);
    d.cmd(&["SET", "fn:mine", "1"]);
    d.cmd(&["SET", "secret", "2"]);
    setuser(
        &mut d,
        &["fcaller", "on", "nopass", "+fcall", "+get", "~fn:*"],
    );
    d.cmd(&["AUTH", "fcaller", "x"]);
    d.cmd(&["FCALL", "getkey", "1", "fn:mine"]);
    d.cmd(&["FCALL", "getkey", "1", "secret"]);
    d.cmd(&["FCALL", "check", "0", "get", "fn:a"]);
    d.cmd(&["FCALL", "check", "0", "get", "other"]);
    d.cmd(&["FCALL", "check", "0", "set", "fn:a", "v"]);
    d.cmd(&["FCALL", "check", "0", "nosuchcommand"]);
}

/// ACL commands inside MULTI take effect once, in order among themselves,
/// even when the transaction runs again after a cold read (run this suite
/// with FIRN_DIFF_COLD=1 to make every read cold).
#[test]
fn acl_commands_in_a_transaction_take_effect_once() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    setuser(&mut d, &["gone", "on", ">pw"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["ACL", "DELUSER", "gone"]);
    d.cmd(&["ACL", "SETUSER", "made", "on", ">a", "<a"]);
    d.cmd(&["ACL", "SETUSER", "made", ">b"]);
    d.cmd(&["ACL", "GETUSER", "made"]);
    d.cmd(&["ACL", "USERS"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["ACL", "USERS"]);
}
