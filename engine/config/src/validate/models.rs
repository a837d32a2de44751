//! `[[models]]`: one contact model per pair of groups.
//!
//! Guarantees of [`ModelAssignment`]: a non-empty model name, exactly two
//! non-empty group names (`"*"` allowed), and properties sorted by name.
//! Property values are left to the engine, which checks them against the
//! model's descriptor; that each pair is assigned once is checked in
//! [`super::validate`].

use std::ops::Range;

use serde_spanned::Spanned;
use talus_core::ContactFrame;

use super::{block_resolution, Ctx, Result};
use crate::error::Location;
use crate::spec::{FrameSpec, ModelSpec};
use crate::types::ModelAssignment;

/// The validated rule and the span of its `groups` (what duplicates point at).
pub(super) fn model(
    ctx: &Ctx<'_>,
    m: Spanned<ModelSpec>,
    table: &str,
) -> Result<(ModelAssignment, Range<usize>)> {
    let location = ctx.loc(&m.span());
    let m = m.into_inner();
    let name = m.model.get_ref().trim();
    if name.is_empty() {
        return Err(ctx.invalid(
            &m.model.span(),
            format!("'model' in {table} must not be empty"),
        ));
    }
    let groups_span = m.groups.span();
    let groups = m.groups.into_inner();
    if groups.len() != 2 {
        return Err(ctx.invalid(
            &groups_span,
            format!(
                "'groups' in {table} needs exactly two group names (\"*\" matches any group), got {}",
                groups.len()
            ),
        ));
    }
    let mut names = [String::new(), String::new()];
    for (slot, g) in names.iter_mut().zip(&groups) {
        let n = g.get_ref().trim();
        if n.is_empty() {
            return Err(ctx.invalid(
                &g.span(),
                format!("group names in 'groups' of {table} must not be empty"),
            ));
        }
        *slot = n.to_owned();
    }
    let mut properties: Vec<(String, f64, Location)> = m
        .properties
        .map(|p| {
            p.into_inner()
                .0
                .into_iter()
                .map(|(k, v)| (k.get_ref().clone(), v.get_ref().0, ctx.loc(&k.span())))
                .collect()
        })
        .unwrap_or_default();
    // toml's map order depends on its features; sort so the order is fixed.
    properties.sort_by(|a, b| a.0.cmp(&b.0));
    let block_resolution = m.block_resolution.map(|r| block_resolution(r.into_inner()));
    let six_dof = m
        .frame
        .as_ref()
        .is_some_and(|f| *f.get_ref() == FrameSpec::SixDof);
    let frame = match m.no_ratchet {
        Some(nr) if !six_dof => {
            return Err(ctx.invalid(
                &nr.span(),
                format!(
                    "'no_ratchet' in {table} chooses the branch vectors of the six-DOF frame; \
                     it needs frame = \"six_dof\""
                ),
            ))
        }
        nr if six_dof => ContactFrame::SixDof {
            // Branch vectors to the contact location by default: a rigid
            // motion then gives no increment at any overlap, and the
            // relative velocity is the default update's (docs/config.md).
            no_ratchet: nr.is_some_and(|b| b.into_inner()),
        },
        _ => ContactFrame::Rotations,
    };
    let assignment = ModelAssignment {
        model: name.to_owned(),
        groups: names,
        properties,
        block_resolution,
        frame,
        location,
    };
    Ok((assignment, groups_span))
}
