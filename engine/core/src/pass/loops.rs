//! The two loops of a chunk pass, each a function of its own: kept out
//! of [`super::run_chunk`] (and out of line), each loop gets the registers
//! to itself (dense 10k, one thread: about 2 % of the run).

use super::{idle_input, Chunk, ChunkPass, IDLE_GAP};
use crate::contact::six_dof::FrameUpdate;
use crate::contact::{self, BATCH, BOND_NEAREST, CARRIED, CARRY_STIFFNESS, HELD, RELEASED};
use crate::narrow::*;
use crate::piece::PairKind;
use crate::sums::Sums;
use talus_sdk::{flags, report, ContactInput, STATUS_ACTIVE};

/// The pass's scene with its cell a constant when `CELL` is false. (Each
/// loop takes its own copy, whose address goes to no call that is not
/// inlined.)
#[inline(always)]
fn cell_folded<'a, const CELL: bool>(pass: &ChunkPass<'a>) -> Scene<'a> {
    Scene {
        cell: if CELL { pass.scene.cell } else { None },
        ..pass.scene
    }
}

/// The resolution part of [`run_chunk`]: every contact's plane, frame and
/// model input, the idle and moved bits, and the runs for the model; returns
/// how many contacts go to the model. Kept out of line so that its loop gets
/// the registers to itself.
#[inline(never)]
pub(super) fn resolve_chunk<K: PairKernel, F: FrameUpdate, const CELL: bool>(
    pass: &ChunkPass<'_>,
    ch: &mut Chunk<'_>,
    inputs: &mut [ContactInput],
    runs: &mut Vec<(usize, usize)>,
    idle: &mut [u64; BATCH / 64],
    moved: &mut [u64; BATCH / 64],
) -> usize {
    let scene = &cell_folded::<CELL>(pass);
    let mut called = 0;
    let len = inputs.len();
    let plane = &mut ch.plane[..len];
    let (setup, end1, end2) = (&ch.setup[..len], &ch.end1[..len], &ch.end2[..len]);
    // The run being extended: its start and one past its last busy
    // contact.
    let mut run: Option<(usize, usize)> = None;
    let mut unused: contact::Displacements = [0.0; 6];
    // The idle bits of each word gather in a register: set one at a
    // time in the array, every released contact waited for the
    // previous one's store to the same word.
    for (w, word) in idle.iter_mut().enumerate().take(len.div_ceil(64)) {
        let (first, n) = (w * 64, (len - w * 64).min(64));
        // Released contacts still apart first, in a loop of their own
        // where the kernel can tell them cheaply: mixed into the
        // resolution, each paid for the registers the busy ones need
        // (settle 10k, nearly all contacts released: 28 % of the run).
        let mut bits = 0u64;
        if K::QUICK_RELEASE && pass.overlap_only {
            for j in 0..n {
                let k = first + j;
                let f = setup[k].flags;
                let apart = f & RELEASED != 0
                    && !(K::CARRIES_BONDS && f & HELD != 0)
                    && K::released_apart(scene, &plane[k], end1[k], end2[k]);
                bits |= u64::from(apart) << j;
            }
        }
        let mut todo = !bits & (u64::MAX >> (64 - n));
        while todo != 0 {
            let k = first + todo.trailing_zeros() as usize;
            todo &= todo - 1;
            // The column is empty in lanes without the six-DOF frame,
            // which never read what they are given in its place.
            let dof = if F::SIX_DOF {
                &mut ch.dof[k]
            } else {
                &mut unused
            };
            let busy = resolve_one::<K, F>(
                scene,
                &mut plane[k],
                &mut ch.cache[k * K::CACHE..(k + 1) * K::CACHE],
                dof,
                &setup[k],
                end1[k],
                end2[k],
                pass.dt,
                (pass.overlap_only, pass.keeps),
                &mut inputs[k],
            );
            if !busy {
                bits |= 1 << (k % 64);
                continue;
            }
            if K::took_over(&ch.cache[k * K::CACHE..(k + 1) * K::CACHE]) {
                moved[w] |= 1 << (k % 64);
            }
            if let Some(install) = pass.install {
                // With a wall, the one facet contact per ball and wall,
                // or per block, wall and plane, that bonds was chosen
                // before the pass.
                let chosen = match K::PAIR {
                    PairKind::BallFacet | PairKind::BlockFacet => {
                        setup[k].flags & BOND_NEAREST != 0
                    }
                    PairKind::BallConvex
                    | PairKind::BlockConvex
                    | PairKind::ConvexConvex
                    | PairKind::ConvexFacet => false,
                    _ => true,
                };
                if chosen && install.bonds(setup[k].prop_set, plane[k].gap) {
                    inputs[k].flags |= flags::BOND;
                    let cache = &ch.cache[k * K::CACHE..(k + 1) * K::CACHE];
                    inputs[k].radius = K::bond_radius(cache, inputs[k].radius);
                }
            }
            called += 1;
            run = Some(match run {
                Some((start, end)) if k - end < IDLE_GAP => {
                    for j in end..k {
                        idle_input(&mut inputs[j], &setup[j]);
                    }
                    (start, k + 1)
                }
                Some(done) => {
                    runs.push(done);
                    (k, k + 1)
                }
                None => (k, k + 1),
            });
        }
        *word = bits;
    }
    runs.extend(run);
    called
}

/// The sums part of [`run_chunk`]: each contact's flags and carry from its
/// model's output, and what it applies added to the sums of its ends.
/// Kept out of line so that its loop gets the registers to itself.
#[inline(never)]
pub(super) fn sum_chunk<K: PairKernel, const CELL: bool>(
    pass: &ChunkPass<'_>,
    ch: &mut Chunk<'_>,
    (idle, skip_idle): (&[u64; BATCH / 64], bool),
    (broke, unheld): (&mut Vec<u32>, &mut bool),
    sums: &mut Sums<'_>,
) {
    let scene = &cell_folded::<CELL>(pass);
    // This step's lone facet contacts of the chunk (see
    // `Simulation::lone`).
    let lone = ch.lone;
    // Iterators rather than indices: the compiler cannot tell that the
    // columns have one length and would check every index.
    let words = ch.plane.chunks(64).zip(ch.setup.chunks_mut(64));
    let words = words.zip(ch.output.chunks(64)).zip(ch.carry.chunks_mut(64));
    let words = words.zip(ch.end1.chunks(64).zip(ch.end2.chunks(64)));
    for (w, ((((plane, setup), output), carry), (end1, end2))) in words.enumerate() {
        let (idle, lone) = (idle[w], lone[w]);
        if skip_idle && idle == u64::MAX >> (64 - plane.len()) {
            continue;
        }
        let rows = plane.iter().zip(setup.iter_mut());
        let rows = rows.zip(output.iter()).zip(carry.iter_mut());
        let ends = end1.iter().zip(end2);
        // The word's breaks and whether a contact stopped asking to be
        // held gather in registers: a push in the loop (a call, however
        // rare) cost the pass its operands, reloaded after every contact
        // (dense 10k: 4 % more instructions in the pass).
        let (mut broke_bits, mut unheld_any) = (0u64, false);
        for (j, ((((plane, setup), out), carry), (&a, &b))) in rows.zip(ends).enumerate() {
            let bit = 1u64 << j;
            if idle & bit == 0 {
                let status = out.status;
                let released = pass.overlap_only && plane.gap > 0.0 && status != STATUS_ACTIVE;
                let f = &mut setup.flags;
                let carried = if lone & bit != 0 { CARRIED } else { 0 };
                let r = out.reserved;
                let held = u32::from(r & report::HOLD != 0) * HELD;
                broke_bits |= u64::from(r & report::BROKE != 0) << j;
                unheld_any |= *f & HELD > held;
                *f = (*f & !(flags::NEW | RELEASED | HELD | BOND_NEAREST))
                    | if released { RELEASED } else { 0 }
                    | carried
                    | held;
                // The carry codes are the status codes; anything else a
                // model might return counts as could-be-active, as in
                // `apply`.
                *carry = if status > STATUS_ACTIVE {
                    CARRY_STIFFNESS
                } else {
                    status as u8
                };
            }
            if *carry < pass.skip_below {
                continue;
            }
            let ap = apply::<K>(scene, plane, out, a, b);
            sums.check += ap.force + ap.torque1 + ap.torque2;
            K::add_end1(sums, a, &ap);
            K::add_end2(sums, scene, b, &ap, *carry);
        }
        *unheld |= unheld_any;
        while broke_bits != 0 {
            broke.push((w * 64 + broke_bits.trailing_zeros() as usize) as u32);
            broke_bits &= broke_bits - 1;
        }
    }
}
