//! What a stopped process leaves in the store: queued jobs run, a job left
//! running runs again, each completes once; a cancelled run's result is
//! dropped.

mod common;

use common::*;
use triskel_serve::remote;
use triskel_serve::store::{NewJob, Removal, State, Store};

#[test]
fn queued_and_running_jobs_complete_after_a_restart() {
    let dir = TempDir::new("restart");
    let config = config(&dir);
    let token = triskel_serve::create_token(&config.store, "alice", None).unwrap();
    let p = program();
    let mut client = client(&p);
    let keys = client.evaluation_keys().unwrap().clone();
    let mut sent = Vec::new();
    let mut ids = Vec::new();
    {
        // The state a killed server leaves: three jobs queued, the first claimed.
        let store = Store::open(&config.store).unwrap();
        let tenant = store.authenticate(&token).unwrap().unwrap();
        store
            .add_key_set(
                &tenant,
                &keys.id(),
                keys.program_digest(),
                &keys.choice().to_bytes(),
                &keys.to_bytes(),
            )
            .unwrap();
        for i in 0..3 {
            let inputs = client
                .encrypt_with_context(&inputs(), format!("job {i}").as_bytes())
                .unwrap();
            let (job, created) = store
                .submit(&NewJob {
                    tenant: &tenant,
                    key_set: keys.id(),
                    program: &p.to_bytes(),
                    inputs: &inputs.to_bytes(),
                    idempotency_key: None,
                    request: [i as u8; 32],
                    queue_capacity: 16,
                })
                .unwrap();
            assert!(created);
            ids.push(job.id);
            sent.push(inputs);
        }
        let running = store.claim().unwrap().unwrap();
        assert_eq!(running.id, ids[0]);
        assert_eq!(running.state, State::Running);
    }
    let running = triskel_serve::start(config).unwrap();
    let remote = remote::Remote::new(&format!("http://{}", running.addr()), Some(token)).unwrap();
    let server = remote.identity().unwrap();
    for (i, (id, inputs)) in ids.iter().zip(&sent).enumerate() {
        let end = remote.wait(id, WAIT).unwrap();
        assert_eq!(end.state, "done", "{end:?}");
        assert_eq!(end.runs, if i == 0 { 2 } else { 1 }, "{end:?}");
        let outputs = remote.outputs(id).unwrap();
        remote::verify(&client, inputs, &outputs, &server).unwrap();
        assert_eq!(
            client.decrypt(&outputs, &server).unwrap().get("y"),
            Some(&expected())
        );
    }
    running.stop();
}

#[test]
fn a_cancelled_run_keeps_no_result() {
    let dir = TempDir::new("cancel");
    let store = Store::open(&dir.0).unwrap();
    let token = store.create_token("alice", None).unwrap();
    let tenant = store.authenticate(&token).unwrap().unwrap();
    let new = NewJob {
        tenant: &tenant,
        key_set: [1; 32],
        program: b"p",
        inputs: b"i",
        idempotency_key: Some("once"),
        request: [2; 32],
        queue_capacity: 16,
    };
    let (job, _) = store.submit(&new).unwrap();
    let (same, created) = store.submit(&new).unwrap();
    assert!(!created);
    assert_eq!(same.id, job.id);
    let claimed = store.claim().unwrap().unwrap();
    assert!(store.claim().unwrap().is_none());
    let Some(Removal::Cancelled(cancelled)) = store.remove_job(tenant.id, &job.id).unwrap() else {
        panic!("a running job is cancelled");
    };
    assert_eq!(cancelled.state, State::Cancelled);
    assert!(!store.finish(&job.id, claimed.runs, Ok(b"outputs")).unwrap());
    let after = store.job(tenant.id, &job.id).unwrap().unwrap();
    assert_eq!((after.state, after.outputs_blob), (State::Cancelled, None));
    // Deleting the finished job removes it and its blobs.
    assert_eq!(
        store.remove_job(tenant.id, &job.id).unwrap(),
        Some(Removal::Deleted)
    );
    assert!(store.job(tenant.id, &job.id).unwrap().is_none());
    let blobs: Vec<_> = walk(&dir.0.join("blobs"));
    assert!(blobs.is_empty(), "{blobs:?}");
    // Another tenant sees nothing.
    assert!(store.remove_job(tenant.id + 1, &job.id).unwrap().is_none());
}

#[test]
fn a_damaged_blob_is_refused_when_loaded() {
    let dir = TempDir::new("damaged");
    let store = Store::open(&dir.0).unwrap();
    let digest = store.put_blob(b"evaluation keys").unwrap();
    assert_eq!(store.get_blob(&digest).unwrap(), b"evaluation keys");
    let path = walk(&dir.0.join("blobs")).pop().unwrap();
    std::fs::write(&path, b"evaluation kEys").unwrap();
    let e = store.get_blob(&digest).unwrap_err();
    assert!(e.message.contains("damaged"), "{e}");
}

/// One server per store: a second one is refused while the first serves,
/// and a token can still be made; once the first stops, the store opens.
#[test]
fn a_store_serves_one_server_at_a_time() {
    let dir = TempDir::new("one-server");
    let config = config(&dir);
    let first = triskel_serve::start(config.clone()).unwrap();
    let second = triskel_serve::start(config.clone()).err().expect("refused");
    assert!(
        second
            .to_string()
            .contains("in use by another triskel serve process"),
        "{second}"
    );
    triskel_serve::create_token(&config.store, "alice", None).unwrap();
    first.stop();
    triskel_serve::start(config).unwrap().stop();
}
