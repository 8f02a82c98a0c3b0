//! Unit tests of the cluster's key hashing, redirect parsing and layout reading.

use super::*;

#[test]
fn crc16_matches_the_cluster_specification() {
    // The check value of CRC16/XMODEM and the example of the cluster specification.
    assert_eq!(crc16(b"123456789"), 0x31c3);
    assert_eq!(key_slot(b"foo"), 12182);
    assert_eq!(key_slot(b"bar"), 5061);
    assert_eq!(key_slot(b""), 0);
}

#[test]
fn keys_with_one_hash_tag_share_the_slot_of_the_tag() {
    assert_eq!(
        key_slot(b"{user1000}.following"),
        key_slot(b"{user1000}.followers")
    );
    assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
}

#[test]
fn an_empty_hash_tag_is_ignored_and_the_whole_key_is_hashed() {
    assert_eq!(
        key_slot(b"foo{}{bar}"),
        crc16(b"foo{}{bar}") % SLOTS as u16,
        "an empty tag hashes the whole key"
    );
    assert_ne!(key_slot(b"foo{}{bar}"), key_slot(b"bar"));
}

#[test]
fn the_tag_runs_from_the_first_open_brace_to_the_next_close_brace() {
    assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
    assert_eq!(key_slot(b"foo{bar}{zap}"), key_slot(b"bar"));
}

#[test]
fn a_key_with_no_close_brace_is_hashed_whole() {
    assert_eq!(
        key_slot(b"no close {brace"),
        crc16(b"no close {brace") % SLOTS as u16
    );
}

#[test]
fn redirects_are_read_and_other_errors_are_not() {
    let moved = Redirect::parse("MOVED 3999 127.0.0.1:6381");
    assert_eq!(
        moved,
        Some(Redirect {
            ask: false,
            slot: 3999,
            to: NodeAddr {
                host: "127.0.0.1".into(),
                port: 6381
            }
        })
    );
    let ask = Redirect::parse("ASK 1 [::1]:7000");
    assert_eq!(
        ask,
        Some(Redirect {
            ask: true,
            slot: 1,
            to: NodeAddr {
                host: "::1".into(),
                port: 7000
            }
        })
    );
    for other in [
        "ERR unknown command",
        "MOVED",
        "MOVED 99999 h:1",
        "MOVED 1 nohost",
        "ASK x h:1",
        "MOVED 1 h:port",
    ] {
        assert_eq!(Redirect::parse(other), None, "{other}");
    }
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

#[test]
fn cluster_shards_give_each_master_its_ranges() {
    let node = |port: i64, role: &str, health: &str| {
        Reply::Array(vec![
            bulk("id"),
            bulk("abc"),
            bulk("port"),
            Reply::Integer(port),
            bulk("ip"),
            bulk("127.0.0.1"),
            bulk("endpoint"),
            bulk("127.0.0.1"),
            bulk("role"),
            bulk(role),
            bulk("health"),
            bulk(health),
        ])
    };
    let shard = |slots: &[i64], nodes: Vec<Reply>| {
        Reply::Array(vec![
            bulk("slots"),
            Reply::Array(slots.iter().map(|&s| Reply::Integer(s)).collect()),
            bulk("nodes"),
            Reply::Array(nodes),
        ])
    };
    let reply = Reply::Array(vec![
        shard(
            &[0, 5460, 10923, 10923],
            vec![
                node(7001, "replica", "online"),
                node(7000, "master", "online"),
            ],
        ),
        shard(&[5461, 10922], vec![node(7002, "master", "online")]),
        shard(&[10924, 16383], vec![node(7003, "master", "loading")]),
    ]);
    let ranges = parse_shards(&reply).unwrap_or_default();
    let map = ClusterMap::from_ranges(&ranges);
    assert_eq!(
        map.nodes.iter().map(|n| n.port).collect::<Vec<_>>(),
        [7000, 7002]
    );
    assert_eq!(
        (
            map.owner[0],
            map.owner[5460],
            map.owner[5461],
            map.owner[10923]
        ),
        (0, 0, 1, 0)
    );
    assert_eq!(
        map.unowned(),
        16383 - 10924 + 1,
        "a master that is not online serves nothing"
    );
}

#[test]
fn backwards_and_overlong_ranges_are_read_as_their_slots_and_counted() {
    let node = |port| NodeAddr {
        host: "127.0.0.1".into(),
        port,
    };
    let map = ClusterMap::from_ranges(&[
        (16383, 8192, node(7001)),
        (0, 8191, node(7000)),
        (16000, 20000, node(7001)),
        (20000, 30000, node(7002)),
    ]);
    assert_eq!(map.unowned(), 0, "every slot has its master");
    assert_eq!((map.owner[0], map.owner[8192], map.owner[16383]), (0, 1, 1));
    assert_eq!((map.reversed, map.out_of_range), (1, 1));
    assert_eq!(
        map.nodes.len(),
        3,
        "a master whose range lies past the slots is kept"
    );
}

#[test]
fn a_slot_list_that_does_not_pair_up_is_not_read() {
    let shard = |slots: Vec<Reply>| {
        Reply::Array(vec![Reply::Array(vec![
            bulk("slots"),
            Reply::Array(slots),
            bulk("nodes"),
            Reply::Array(vec![Reply::Array(vec![
                bulk("ip"),
                bulk("127.0.0.1"),
                bulk("port"),
                Reply::Integer(7000),
                bulk("role"),
                bulk("master"),
            ])]),
        ])])
    };
    let n = Reply::Integer;
    assert!(parse_shards(&shard(vec![n(0), n(16383)])).is_some());
    assert_eq!(
        parse_shards(&shard(vec![n(0), Reply::Null, n(16383), n(5)])),
        None
    );
    assert_eq!(parse_shards(&shard(vec![n(0), n(100), n(200)])), None);
}

#[test]
fn cluster_slots_are_read_too() {
    let range = |a: i64, b: i64, port: i64| {
        Reply::Array(vec![
            Reply::Integer(a),
            Reply::Integer(b),
            Reply::Array(vec![bulk("127.0.0.1"), Reply::Integer(port), bulk("id")]),
            Reply::Array(vec![
                bulk("127.0.0.1"),
                Reply::Integer(port + 100),
                bulk("id2"),
            ]),
        ])
    };
    let reply = Reply::Array(vec![range(0, 8191, 7000), range(8192, 16383, 7001)]);
    let map = ClusterMap::from_ranges(&parse_slots(&reply).unwrap_or_default());
    assert_eq!(map.nodes.len(), 2);
    assert_eq!((map.owner[8191], map.owner[8192], map.unowned()), (0, 1, 0));
    assert_eq!(map.node_index("127.0.0.1", 7001), Some(1));
    assert_eq!(
        map.node_index("127.0.0.1", 7100),
        None,
        "replicas are not routed to"
    );
}
