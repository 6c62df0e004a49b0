//! Differential tests of SORT and SORT_RO against redis-server 7.0.15:
//! numeric and ALPHA order, DESC, LIMIT arithmetic, BY string keys and
//! hash fields, BY a constant (no sort), GET patterns, STORE, errors, and
//! each sortable type (list, set, sorted set).

use firn_testkit::Diff;

fn list(d: &mut Diff, key: &str, items: &[&str]) {
    let mut cmd = vec!["RPUSH", key];
    cmd.extend_from_slice(items);
    d.cmd(&cmd);
}

#[test]
fn numeric_and_alpha_order_with_limits() {
    let mut d = Diff::new();
    list(
        &mut d,
        "l",
        &["3", "1", "2", "10", "-5", "2.5", "1e2", " 7", "0x10"],
    );
    d.cmd(&["SORT", "l"]);
    d.cmd(&["SORT", "l", "DESC"]);
    d.cmd(&["SORT", "l", "ALPHA"]);
    d.cmd(&["SORT", "l", "ALPHA", "DESC"]);
    for (start, count) in [
        ("0", "3"),
        ("2", "100"),
        ("-1", "2"),
        ("5", "-1"),
        ("100", "2"),
        ("0", "0"),
        ("3", "1"),
    ] {
        d.cmd(&["SORT", "l", "LIMIT", start, count]);
        d.cmd(&["SORT", "l", "LIMIT", start, count, "DESC", "ALPHA"]);
    }
    d.cmd(&["SORT", "l", "LIMIT", "x", "1"]);
    d.cmd(&["SORT", "l", "LIMIT", "1"]);
    d.cmd(&["SORT", "l", "BOGUS"]);
    list(&mut d, "words", &["pear", "apple", "fig", "apple"]);
    d.cmd(&["SORT", "words"]);
    d.cmd(&["SORT", "words", "ALPHA"]);
    d.cmd(&["SORT", "missing"]);
    d.cmd(&["SORT", "missing", "ALPHA", "LIMIT", "0", "1"]);
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["SORT", "s"]);
    d.cmd(&["HSET", "h", "f", "v"]);
    d.cmd(&["SORT", "h"]);
    d.cmd(&["SORT"]);
}

#[test]
fn by_and_get_patterns() {
    let mut d = Diff::new();
    list(&mut d, "ids", &["1", "2", "3", "4"]);
    d.cmd(&[
        "MSET", "w_1", "40", "w_2", "10", "w_3", "30", "name_1", "one", "name_3", "three",
    ]);
    d.cmd(&["HSET", "obj_1", "rank", "4", "label", "L1"]);
    d.cmd(&["HSET", "obj_2", "rank", "2", "label", "L2"]);
    d.cmd(&["HSET", "obj_4", "rank", "1"]);
    d.cmd(&["SORT", "ids", "BY", "w_*"]);
    d.cmd(&["SORT", "ids", "BY", "w_*", "DESC"]);
    d.cmd(&["SORT", "ids", "BY", "obj_*->rank"]);
    d.cmd(&[
        "SORT",
        "ids",
        "BY",
        "obj_*->rank",
        "GET",
        "#",
        "GET",
        "obj_*->label",
        "GET",
        "name_*",
    ]);
    d.cmd(&[
        "SORT", "ids", "BY", "w_*", "GET", "name_*", "LIMIT", "1", "2",
    ]);
    d.cmd(&["SORT", "ids", "BY", "nosort"]);
    d.cmd(&["SORT", "ids", "BY", "nosort", "DESC"]);
    d.cmd(&["SORT", "ids", "BY", "nosort", "LIMIT", "1", "2"]);
    d.cmd(&["SORT", "ids", "BY", "nosort", "DESC", "LIMIT", "1", "2"]);
    d.cmd(&["SORT", "ids", "GET", "nostar"]);
    d.cmd(&["SORT", "ids", "GET", "obj_*->"]);
    d.cmd(&["SORT", "ids", "GET", "w_*->rank"]);
    d.cmd(&["SET", "bad_1", "x"]);
    d.cmd(&["SORT", "ids", "BY", "bad_*"]);
    d.cmd(&["SORT", "ids", "BY", "name_*", "ALPHA"]);
    d.cmd(&["SORT", "ids", "BY", "name_*", "ALPHA", "DESC"]);
}

#[test]
fn store_writes_a_list() {
    let mut d = Diff::new();
    list(&mut d, "l", &["3", "1", "2"]);
    d.cmd(&["SORT", "l", "STORE", "dst"]);
    d.cmd(&["LRANGE", "dst", "0", "-1"]);
    d.cmd(&["TYPE", "dst"]);
    d.cmd(&["SET", "w_1", "9"]);
    d.cmd(&[
        "SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*", "STORE", "dst",
    ]);
    d.cmd(&["LRANGE", "dst", "0", "-1"]);
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["SORT", "l", "STORE", "str"]);
    d.cmd(&["TYPE", "str"]);
    d.cmd(&["SORT", "l", "LIMIT", "5", "5", "STORE", "dst"]);
    d.cmd(&["EXISTS", "dst"]);
    d.cmd(&["SORT", "missing", "STORE", "str"]);
    d.cmd(&["EXISTS", "str"]);
    d.cmd(&["SORT_RO", "l", "STORE", "dst"]);
    d.cmd(&["SORT_RO", "l", "DESC"]);
    d.cmd(&["SORT_RO", "l", "BY", "nosort"]);
}

#[test]
fn sets_and_sorted_sets() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "s", "5", "3", "9", "1"]);
    d.cmd(&["SORT", "s"]);
    d.cmd(&["SORT", "s", "DESC", "LIMIT", "1", "2"]);
    d.cmd_unordered(&["SORT", "s", "BY", "nosort"]);
    // With STORE a set is sorted ALPHA even BY nosort.
    d.cmd(&["SORT", "s", "BY", "nosort", "STORE", "dst"]);
    d.cmd(&["LRANGE", "dst", "0", "-1"]);
    d.cmd(&["SADD", "names", "b", "a", "c"]);
    d.cmd(&["SORT", "names"]);
    d.cmd(&["SORT", "names", "ALPHA"]);
    d.cmd(&["ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb"]);
    d.cmd(&["SORT", "z", "ALPHA"]);
    d.cmd(&["SORT", "z", "BY", "nosort"]);
    d.cmd(&["SORT", "z", "BY", "nosort", "DESC"]);
    d.cmd(&["SORT", "z", "BY", "nosort", "LIMIT", "1", "2"]);
    d.cmd(&["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "5"]);
    d.cmd(&["SORT", "z"]);
    // SORT (even SORT_RO, even one that fails) converts a small sorted set
    // to Redis's skiplist encoding.
    d.cmd(&["ZADD", "z2", "1", "x"]);
    d.cmd(&["OBJECT", "ENCODING", "z2"]);
    d.cmd(&["SORT_RO", "z2"]);
    d.cmd(&["OBJECT", "ENCODING", "z2"]);
    d.cmd(&["ZADD", "z3", "1", "x", "2", "1"]);
    d.cmd(&["SORT", "z3", "LIMIT", "0", "1"]);
    d.cmd(&["OBJECT", "ENCODING", "z3"]);
}
