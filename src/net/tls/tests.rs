//! Unit tests of [`TlsSettings::build`]: good files make one shared configuration, and
//! every bad file or name is refused in one line naming the flag and the file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use super::*;

/// A self-signed certificate and its key, as PEM files in a temporary directory.
fn pem_files() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let signed = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, signed.cert.pem()).unwrap();
    std::fs::write(&key, signed.signing_key.serialize_pem()).unwrap();
    (dir, cert, key)
}

fn error(opts: TlsOptions<'_>) -> String {
    let err = TlsSettings::build(&opts, "localhost")
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn good_files_build_one_shared_configuration() {
    let (_dir, cert, key) = pem_files();
    let opts = TlsOptions {
        cacert: Some(&cert),
        cert: Some(&cert),
        key: Some(&key),
        ..Default::default()
    };
    let tls = TlsSettings::build(&opts, "127.0.0.1").unwrap();
    assert!(!tls.is_insecure());
    assert_eq!(tls.clone(), tls, "clones share the configuration");
    assert_ne!(
        TlsSettings::build(&opts, "127.0.0.1").unwrap(),
        tls,
        "another build is another configuration"
    );
}

#[test]
fn bad_files_are_refused_naming_the_flag_and_the_file() {
    let (dir, cert, key) = pem_files();
    let missing = dir.path().join("nosuch.pem");
    let err = error(TlsOptions {
        cacert: Some(&missing),
        ..Default::default()
    });
    assert!(
        err.starts_with("--cacert ") && err.contains("nosuch.pem") && err.contains("cannot read"),
        "{err}"
    );

    let err = error(TlsOptions {
        cacert: Some(&key),
        ..Default::default()
    });
    assert!(
        err.starts_with("--cacert ")
            && err.contains("key.pem")
            && err.contains("no \"CERTIFICATE\""),
        "{err}"
    );

    let err = error(TlsOptions {
        cacert: Some(&cert),
        cert: Some(&cert),
        key: Some(&cert),
        ..Default::default()
    });
    assert!(
        err.starts_with("--key ") && err.contains("cert.pem") && err.contains("PRIVATE KEY"),
        "{err}"
    );

    let broken = dir.path().join("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let err = error(TlsOptions {
        cacert: Some(&broken),
        ..Default::default()
    });
    assert!(
        err.starts_with("--cacert ") && err.contains("broken.pem"),
        "{err}"
    );

    let (_other_dir, _, other_key) = pem_files();
    let err = error(TlsOptions {
        cacert: Some(&cert),
        cert: Some(&cert),
        key: Some(&other_key),
        ..Default::default()
    });
    assert!(
        err.contains("--cert") && err.contains("--key") && err.contains("do not belong together"),
        "{err}"
    );
}

#[test]
fn a_name_that_cannot_be_checked_is_refused() {
    let err = error(TlsOptions {
        sni: Some("not a name"),
        insecure: true,
        ..Default::default()
    });
    assert!(err.starts_with("--sni not a name:"), "{err}");
}
