//! Tests that need the crate's private hooks.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::{Column, DatasetWriter, Frame, Table, WriterOptions};

fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "talus-output-unit-{}-{name}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn frame(step: u64) -> Frame {
    Frame::new()
        .push("step", "", "step number", Column::U64(vec![step; 3]))
        .push("gap", "m", "contact gap", Column::F64(vec![0.0, 1.0, 2.0]))
}

/// With the writer held inside its hook (one frame in its hands), exactly
/// `queue_depth` more frames fit in the queue; the next one would block
/// (`try_send` reports the queue full instead of blocking). The queue is
/// the same `sync_channel` `send` uses, so this pins the memory bound:
/// at most `queue_depth + 1` frames are alive between simulation and disk.
#[test]
fn queue_holds_at_most_queue_depth_frames() {
    let dir = scratch_dir("queue");
    let queue_depth = 2;
    let (taken_tx, taken_rx) = mpsc::channel::<()>();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let hook = Box::new(move || {
        let _ = taken_tx.send(());
        // Returns at once with an error when the gate sender is dropped.
        let _ = gate_rx.recv();
    });
    let options = WriterOptions {
        queue_depth,
        ..WriterOptions::default()
    };
    let writer = DatasetWriter::create_with_hook(&dir, options, Some(hook)).unwrap();

    writer.send(Table::Contacts, frame(0)).unwrap();
    taken_rx.recv().unwrap(); // the writer now holds frame 0 and waits
    for step in 1..=queue_depth as u64 {
        assert!(
            writer.try_send(Table::Contacts, frame(step)).unwrap(),
            "frame {step} should fit in the queue"
        );
    }
    assert!(
        !writer.try_send(Table::Contacts, frame(99)).unwrap(),
        "the queue accepted more than queue_depth frames"
    );

    drop(gate_tx);
    let summary = writer.finish().unwrap();
    assert_eq!(summary.contacts.rows, 3 * (queue_depth as u64 + 1));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A zero-depth queue is a rendezvous: nothing waits in the queue at all.
#[test]
fn zero_depth_queue_is_a_rendezvous() {
    let dir = scratch_dir("rendezvous");
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let (taken_tx, taken_rx) = mpsc::channel::<()>();
    let hook = Box::new(move || {
        let _ = taken_tx.send(());
        let _ = gate_rx.recv();
    });
    let options = WriterOptions {
        queue_depth: 0,
        ..WriterOptions::default()
    };
    let writer = DatasetWriter::create_with_hook(&dir, options, Some(hook)).unwrap();
    writer.send(Table::Walls, frame(0)).unwrap();
    taken_rx.recv().unwrap();
    assert!(!writer.try_send(Table::Walls, frame(1)).unwrap());
    drop(gate_tx);
    assert_eq!(writer.finish().unwrap().walls.rows, 3);
    std::fs::remove_dir_all(&dir).unwrap();
}
