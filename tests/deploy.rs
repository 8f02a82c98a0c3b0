//! The deployment files in `deploy/`: the Kubernetes manifests parse, and hold what
//! tailrate relies on (an Indexed Job of K pods and `--shards K`, the index variable,
//! one start instant, results on the shared volume, a merge of that volume); the Slurm
//! batch script is valid shell and starts its shards with `srun`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_yaml::Value;

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(path)
}

/// Every document of a manifest file.
fn documents(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(deploy(path)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect()
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_sequence()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The value after `flag` in `args`.
fn after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("{flag} missing from {args:?}"));
    &args[i + 1]
}

#[test]
fn the_indexed_job_runs_k_shards_of_one_plan_from_one_start() {
    let docs = documents("kubernetes/tailrate.yaml");
    let jobs = of_kind(&docs, "Job");
    assert_eq!(jobs.len(), 1);
    let spec = &jobs[0]["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let completions = spec["completions"].as_u64().unwrap();
    assert_eq!(spec["parallelism"].as_u64(), Some(completions));
    let pod = &spec["template"]["spec"];
    let container = &pod["containers"][0];
    let args = strings(&container["args"]);
    // tailrate reads JOB_COMPLETION_INDEX (set by Kubernetes) with --shards K.
    assert_eq!(after(&args, "--shards"), completions.to_string());
    assert!(
        !args.iter().any(|a| a == "--shard"),
        "the index is the Job's"
    );
    assert!(
        args.iter().any(|a| a == "--seed"),
        "every shard needs one seed"
    );
    // One start instant, from an env var the pods share.
    assert_eq!(after(&args, "--start-at"), "$(START_AT)");
    let env = container["env"].as_sequence().unwrap();
    let var = |name: &str| env.iter().find(|e| e["name"] == name).unwrap();
    let start = var("START_AT")["value"].as_str().unwrap();
    let parsed = tailrate::config::shard::parse_start_at(start, std::time::SystemTime::now());
    assert!(parsed.is_ok(), "START_AT {start}: {parsed:?}");
    assert_eq!(
        var("SHARD")["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    // Results on the shared volume, one file per shard.
    let mount = container["volumeMounts"][0]["mountPath"].as_str().unwrap();
    for flag in ["--json", "--hdr-log"] {
        let path = after(&args, flag);
        assert!(
            path.starts_with(&format!("{mount}/")) && path.contains("$(SHARD)"),
            "{flag} {path}"
        );
    }
    let claim = pod["volumes"][0]["persistentVolumeClaim"]["claimName"].clone();
    let pvc = of_kind(&docs, "PersistentVolumeClaim");
    assert_eq!(pvc[0]["metadata"]["name"], claim);
    assert!(strings(&pvc[0]["spec"]["accessModes"]).contains(&"ReadWriteMany".to_string()));
    // The headless Service selects the Job's pods and names their subdomain.
    let service = of_kind(&docs, "Service")[0];
    assert_eq!(service["spec"]["clusterIP"], "None");
    let labels = &spec["template"]["metadata"]["labels"];
    for (k, v) in service["spec"]["selector"].as_mapping().unwrap() {
        assert_eq!(&labels[k.as_str().unwrap()], v);
    }
    assert_eq!(pod["subdomain"], service["metadata"]["name"]);
    // The plan's flags are tailrate's: they parse as a run.
    let mut argv = vec!["tailrate".to_string()];
    argv.extend(
        args.iter()
            .map(|a| a.replace("$(START_AT)", "+30s").replace("$(SHARD)", "0")),
    );
    let parsed = <tailrate::cli::Args as clap::Parser>::try_parse_from(&argv);
    assert!(parsed.is_ok(), "{argv:?}: {:?}", parsed.err());

    let merge = documents("kubernetes/merge-job.yaml");
    let m = &of_kind(&merge, "Job")[0]["spec"]["template"]["spec"];
    let margs = strings(&m["containers"][0]["args"]);
    assert_eq!(margs[0], "merge");
    assert_eq!(margs[1], mount);
    assert!(after(&margs, "--out").starts_with(mount));
    assert_eq!(m["volumes"][0]["persistentVolumeClaim"]["claimName"], claim);
}

#[test]
fn the_slurm_batch_script_is_shell_that_starts_shards_with_srun() {
    let path = deploy("slurm/tailrate.sbatch");
    let out = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    for needle in [
        "srun -n \"$SLURM_NTASKS\"",
        "--start-at \"$START_AT\"",
        "shard-$SLURM_PROCID.json",
        "shard-$SLURM_PROCID.hlog",
        "merge \"$RESULTS\" --out",
    ] {
        assert!(text.contains(needle), "{needle} missing");
    }
}
