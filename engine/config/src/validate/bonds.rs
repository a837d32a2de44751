//! `[[bonds]]`: when the run bonds the contacts between two groups.
//!
//! Guarantees of [`BondRule`]: two non-empty group names without
//! wildcards, whose pair has a `[[models]]` rule (explicit or by
//! wildcard); a finite gap (default 0); at most one of `at_step` (>= 0)
//! and `at_time` (>= 0 s), step 0 by default. Whether the model can hold a
//! bond is the engine's to say, once the plugins are loaded.

use std::collections::HashMap;

use serde_spanned::Spanned;

use super::{int_at_least, Ctx, Result};
use crate::error::Location;
use crate::spec::{BondSpec, Int, Num, Seconds};
use crate::types::BondRule;
use talus_core::When;

/// The validated rule; `pairs` holds the group pairs of `[[models]]`
/// (each sorted, `"*"` kept as written).
pub(super) fn bond_rule(
    ctx: &Ctx<'_>,
    b: Spanned<BondSpec>,
    table: &str,
    pairs: &HashMap<(String, String), Location>,
) -> Result<BondRule> {
    let location = ctx.loc(&b.span());
    let b = b.into_inner();
    let groups_span = b.groups.span();
    let groups = b.groups.into_inner();
    if groups.len() != 2 {
        return Err(ctx.invalid(
            &groups_span,
            format!(
                "'groups' in {table} needs exactly two group names, got {}",
                groups.len()
            ),
        ));
    }
    let mut names = [String::new(), String::new()];
    for (slot, g) in names.iter_mut().zip(&groups) {
        let n = g.get_ref().trim();
        if n.is_empty() || n == "*" {
            return Err(ctx.invalid(
                &g.span(),
                format!("group names in 'groups' of {table} must be named groups (no \"*\")"),
            ));
        }
        *slot = n.to_owned();
    }
    let sorted = |a: &str, b: &str| {
        if a <= b {
            (a.to_owned(), b.to_owned())
        } else {
            (b.to_owned(), a.to_owned())
        }
    };
    let [a, b_] = &names;
    let has_model = [
        sorted(a, b_),
        sorted("*", a),
        sorted("*", b_),
        sorted("*", "*"),
    ]
    .iter()
    .any(|k| pairs.contains_key(k));
    if !has_model {
        return Err(ctx.invalid(
            &groups_span,
            format!(
                "groups '{a}' and '{b_}' in {table} have no contact model to bond with; add a \
                 [[models]] entry with groups = [\"{a}\", \"{b_}\"] and a bonding model such as \
                 \"linearbond\""
            ),
        ));
    }
    let gap = b.gap.as_ref().map_or(0.0, |g| g.get_ref().0);
    let at = when(ctx, &b.at_step, &b.at_time, table, 0)?.unwrap_or(When::Step(0));
    Ok(BondRule {
        groups: names,
        gap,
        at,
        location,
    })
}

/// The moment `at_step` or `at_time` of `table` gives (at most one of
/// them): a step of at least `min_step`, or a time >= 0; `None` when
/// neither is given.
pub(super) fn when(
    ctx: &Ctx<'_>,
    at_step: &Option<Spanned<Int>>,
    at_time: &Option<Spanned<Num<Seconds>>>,
    table: &str,
    min_step: i64,
) -> Result<Option<When>> {
    Ok(match (at_step, at_time) {
        (Some(_), Some(t)) => {
            return Err(ctx.invalid(
                &t.span(),
                format!("{table} takes 'at_step' or 'at_time', not both"),
            ))
        }
        (Some(k), None) => {
            Some(When::Step(
                int_at_least(ctx, k, min_step, &format!("'at_step' in {table}"))? as u64,
            ))
        }
        (None, Some(t)) => {
            let v = t.get_ref().0;
            if v.is_nan() || v < 0.0 {
                return Err(ctx.invalid(
                    &t.span(),
                    format!("'at_time' in {table} must be >= 0 s, got {v}"),
                ));
            }
            Some(When::Time(v))
        }
        (None, None) => None,
    })
}
