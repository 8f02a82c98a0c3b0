//! Unit tests of `workload/template/`: reading arguments into tokens, and writing a
//! template's requests.

#![allow(clippy::unwrap_used)]
use super::*;
use crate::resp::{Limits, Reply, parse};
use crate::workload::KeyFormat;

/// Indices from a list, values of given sizes made of `x`.
struct Script {
    indices: Vec<u64>,
    sizes: Vec<usize>,
    value: Vec<u8>,
}

impl Script {
    fn indices(indices: &[u64]) -> Self {
        Script {
            indices: indices.iter().rev().copied().collect(),
            sizes: Vec::new(),
            value: Vec::new(),
        }
    }
}

impl Fill for Script {
    fn index(&mut self) -> u64 {
        self.indices.pop().unwrap()
    }
    fn value_len(&mut self) -> usize {
        self.sizes.pop().unwrap()
    }
    fn value(&mut self, len: usize) -> &[u8] {
        self.value = vec![b'x'; len];
        &self.value
    }
}

fn placeholders(randomize: bool) -> Placeholders {
    Placeholders {
        randomize,
        key: KeyFormat {
            prefix: b"key:".to_vec(),
            width: 4,
        },
        shas: vec!["ab".repeat(20)],
    }
}

fn typed(words: &[&str]) -> Template {
    let p = placeholders(true);
    let tokens: Vec<Vec<Token>> = words
        .iter()
        .map(|w| p.tokens(w.as_bytes()).unwrap())
        .collect();
    Template::build(&tokens)
}

#[test]
fn random_fields_are_patched_in_place_with_twelve_digits() {
    let t = Template::command(&[b"SET", b"key:__rand_int__", b"v__rand_int__x"], true);
    let mut buf = BytesMut::new();
    t.write(&mut buf, &mut Script::indices(&[42, 999_999]));
    assert_eq!(
        &buf[..],
        b"*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$14\r\nv000000999999x\r\n"
    );
    assert_eq!(t.name, "set");
}

#[test]
fn without_keyspace_the_placeholder_is_sent_as_typed() {
    let t = Template::command(&[b"GET", b"key:__rand_int__"], false);
    let mut buf = BytesMut::new();
    t.write(&mut buf, &mut Script::indices(&[]));
    assert_eq!(&buf[..], b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
    assert!(!t.has_random_fields());
}

#[test]
fn zeros_in_arguments_are_not_taken_for_fields() {
    let t = Template::command(&[b"SET", b"000000000000", b"__rand_int__"], true);
    let mut buf = BytesMut::new();
    t.write(&mut buf, &mut Script::indices(&[7]));
    assert_eq!(
        &buf[..],
        b"*3\r\n$3\r\nSET\r\n$12\r\n000000000000\r\n$12\r\n000000000007\r\n"
    );
}

#[test]
fn long_argument_lists_offset_fields_correctly() {
    let mut argv: Vec<Vec<u8>> = vec![b"MSET".to_vec()];
    for _ in 0..10 {
        argv.push(b"key:__rand_int__".to_vec());
        argv.push(b"xxx".to_vec());
    }
    let refs: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
    let t = Template::command(&refs, true);
    let mut buf = BytesMut::new();
    t.write(
        &mut buf,
        &mut Script::indices(&(1..=10).collect::<Vec<_>>()),
    );
    let text = String::from_utf8(buf.to_vec()).unwrap();
    assert!(
        text.starts_with("*21\r\n$4\r\nMSET\r\n$16\r\nkey:000000000001\r\n$3\r\nxxx\r\n"),
        "{text}"
    );
    assert!(text.contains("key:000000000010"), "{text}");
}

#[test]
fn inline_commands_end_in_crlf() {
    let t = Template::inline(b"PING");
    let mut buf = BytesMut::new();
    t.write(&mut buf, &mut Script::indices(&[]));
    assert_eq!(&buf[..], b"PING\r\n");
    assert_eq!(t.name, "ping");
}

#[test]
fn key_and_data_placeholders_make_a_prefixed_key_and_a_sized_value() {
    let t = typed(&["SET", "__key__", "__data__"]);
    let mut buf = BytesMut::new();
    let mut fill = Script {
        indices: vec![7],
        sizes: vec![5],
        value: Vec::new(),
    };
    t.write(&mut buf, &mut fill);
    assert_eq!(
        &buf[..],
        b"*3\r\n$3\r\nSET\r\n$8\r\nkey:0007\r\n$5\r\nxxxxx\r\n"
    );
    assert!(t.has_value() && t.has_field_of_width(4));
}

#[test]
fn the_variable_size_encoder_writes_valid_resp_for_every_size() {
    let t = typed(&["HSET", "h:__key__", "f", "pre__data__post", "__data__"]);
    let limits = Limits::default();
    for size in (0..300).chain([1000, 4095, 65_536, 100_000]) {
        let mut buf = BytesMut::new();
        let mut fill = Script {
            indices: vec![3],
            sizes: vec![size + 1, size],
            value: Vec::new(),
        };
        t.write(&mut buf, &mut fill);
        let (reply, used) = parse(&buf, &limits).unwrap().unwrap();
        assert_eq!(
            used,
            buf.len(),
            "size {size}: the request is exactly one frame"
        );
        let Reply::Array(items) = reply else {
            panic!("not an array")
        };
        let args: Vec<&[u8]> = items.iter().map(|i| i.as_bytes().unwrap()).collect();
        assert_eq!(args[1], b"h:key:0003");
        assert_eq!(args[3].len(), size + 7);
        assert!(args[3].starts_with(b"pre") && args[3].ends_with(b"post"));
        assert_eq!(args[4].len(), size + 1);
    }
}

#[test]
fn unknown_placeholders_are_refused_and_underscores_elsewhere_are_text() {
    let p = placeholders(true);
    assert!(p.tokens(b"__nosuch__").unwrap_err().contains("__nosuch__"));
    assert!(p.tokens(b"x__Key2__y").unwrap_err().contains("__Key2__"));
    assert_eq!(p.tokens(b"a__b").unwrap(), [Token::Lit(b"a__b".to_vec())]);
    assert_eq!(p.tokens(b"____").unwrap(), [Token::Lit(b"____".to_vec())]);
    assert_eq!(p.tokens(b"").unwrap(), [Token::Lit(Vec::new())]);
    assert_eq!(
        p.tokens(b"___key__").unwrap(),
        [Token::Lit(b"_key:".to_vec()), Token::Digits(4)]
    );
    assert!(
        p.tokens(b"__data____data__")
            .unwrap_err()
            .contains("more than one")
    );
}

#[test]
fn script_placeholders_become_the_sha_of_that_script() {
    let p = placeholders(true);
    assert_eq!(
        p.tokens(b"__sha_1__").unwrap(),
        [Token::Lit("ab".repeat(20).into_bytes())]
    );
    assert!(
        p.tokens(b"__sha_2__")
            .unwrap_err()
            .contains("--script-load")
    );
    assert!(
        p.tokens(b"__sha_0__")
            .unwrap_err()
            .contains("--script-load")
    );
}

#[test]
fn a_routed_request_hashes_the_key_it_will_send() {
    use crate::net::cluster::key_slot;
    let set = Template::command(&[b"SET", b"key:__rand_int__", b"v"], true);
    assert_eq!(set.slot(5), Some(key_slot(b"key:000000000005")));
    assert_ne!(
        set.slot(5),
        set.slot(6),
        "these two keys hash to different slots"
    );
    // The key is the first argument with a key field, wherever it stands.
    let eval = Template::command(&[b"EVAL", b"return 1", b"1", b"{tag}:__rand_int__"], true);
    assert_eq!(eval.slot(1), Some(key_slot(b"tag")));
    // A fixed key routes by itself; a command without arguments has no key.
    assert_eq!(
        Template::command(&[b"LPUSH", b"mylist", b"x"], true).slot(9),
        Some(key_slot(b"mylist"))
    );
    assert_eq!(Template::command(&[b"PING"], true).slot(1), None);
    assert_eq!(Template::inline(b"PING").slot(1), None);
}
