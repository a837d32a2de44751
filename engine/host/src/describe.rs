//! Human-readable model and shape descriptions (for `talus plugins`).

use std::fmt::Write;

use talus_sdk::{inputs, Activity, FeatureRule, Propagation, PropertyDesc, Swap};

use crate::error::range_text;
use crate::{Origin, RegisteredModel, RegisteredShape};

/// The lines every description starts with: `name version` (with a
/// `suffix`), plugin, sdk, origin, summary and citation.
fn header(
    out: &mut String,
    title: &str,
    plugin: &str,
    sdk_version: &str,
    origin: &Origin,
    summary: &str,
    citation: &str,
) {
    // Writing into a String cannot fail.
    let _ = writeln!(out, "{title}");
    let _ = writeln!(out, "  plugin:      {plugin}");
    let _ = writeln!(out, "  sdk:         {sdk_version}");
    // Not wrapped: a path must stay on one line to be copied.
    let _ = writeln!(out, "  origin:      {origin}");
    if !summary.is_empty() {
        field(out, "summary:", summary);
    }
    if !citation.is_empty() {
        field(out, "citation:", citation);
    }
}

/// The table of properties (unit, default or "required", range, doc).
fn properties(out: &mut String, properties: &[PropertyDesc]) {
    if properties.is_empty() {
        let _ = writeln!(out, "  properties:  none");
        return;
    }
    let _ = writeln!(out, "  properties:");
    let rows: Vec<[String; 5]> = properties
        .iter()
        .map(|p| {
            [
                p.name.to_string(),
                p.unit.to_string(),
                p.default
                    .map_or_else(|| "required".to_string(), |v| v.to_string()),
                range_text(p.min, p.max),
                p.doc.to_string(),
            ]
        })
        .collect();
    table(
        out,
        ["name", "unit", "default", "range", "description"],
        &rows,
    );
}

/// A human-readable block describing a registered shape: name, version
/// and "(shape)", plugin, the sdk it was built with, origin, summary,
/// citation, the feature rule, the exact routines it gives and a table of
/// properties (unit, default or "required", range, doc).
pub fn describe_shape(shape: &RegisteredShape) -> String {
    let d = &shape.entry.descriptor;
    let mut out = String::new();
    header(
        &mut out,
        &format!("{} {} (shape)", d.name, d.version),
        &shape.plugin,
        &shape.sdk_version,
        &shape.origin,
        &d.summary,
        &d.citation,
    );
    let features = match d.features {
        FeatureRule::Smooth => "smooth: one feature, contact state carried as it is",
        FeatureRule::ByModel => {
            "by model: on a change of feature each state slot follows its model's wall rule"
        }
    };
    field(&mut out, "features:", features);
    let exact = if shape.has_closest_point() {
        "closest point (ball contacts); GJK and EPA otherwise"
    } else {
        "none: GJK and EPA on the support function"
    };
    field(&mut out, "exact:", exact);
    properties(&mut out, &d.properties);
    out
}

/// A human-readable block describing a registered model: name, version,
/// plugin, the sdk it was built with, origin, summary, citation, a table of properties (unit, default
/// or "required", range, doc), the state columns with their units and
/// their propagation and swap rules, the activity rule and the optional
/// inputs the model reads.
pub fn describe(model: &RegisteredModel) -> String {
    let d = &model.entry.descriptor;
    let mut out = String::new();
    header(
        &mut out,
        &format!("{} {}", d.name, d.version),
        &model.plugin,
        &model.sdk_version,
        &model.origin,
        &d.summary,
        &d.citation,
    );
    let activity = match (d.activity, d.activity_doc.is_empty()) {
        (Activity::Overlap, true) => "overlap: active while the pieces overlap (gap < 0)".into(),
        (Activity::Overlap, false) => format!("overlap: {}", d.activity_doc),
        (Activity::Custom, _) => format!("custom: {}", d.activity_doc),
    };
    field(&mut out, "activity:", &activity);
    if !d.inputs.is_empty() {
        let names: Vec<String> = d
            .inputs
            .iter()
            .map(|&id| match inputs::info(id) {
                Some(i) => format!("{} ({})", i.name, i.unit),
                None => inputs::name(id),
            })
            .collect();
        field(&mut out, "inputs:", &names.join(", "));
    }

    properties(&mut out, &d.properties);

    if d.state.is_empty() {
        let _ = writeln!(out, "  state columns: none");
    } else {
        // "wall": what a slot does when the load moves to another facet's
        // contact; "swap": what it does when the ends swap.
        let _ = writeln!(out, "  state columns:");
        let rows: Vec<[String; 5]> = d
            .state
            .iter()
            .map(|s| {
                [
                    s.name.to_string(),
                    s.unit.to_string(),
                    propagation_word(s.propagation).to_string(),
                    swap_word(s.swap).to_string(),
                    s.doc.to_string(),
                ]
            })
            .collect();
        table(
            &mut out,
            ["name", "unit", "wall", "swap", "description"],
            &rows,
        );
    }
    out
}

fn propagation_word(rule: Propagation) -> &'static str {
    match rule {
        Propagation::None => "none",
        Propagation::Copy => "copy",
        Propagation::Add => "add",
        Propagation::Custom => "custom",
    }
}

fn swap_word(rule: Swap) -> &'static str {
    match rule {
        Swap::Keep => "keep",
        Swap::Negate => "negate",
        Swap::Custom => "custom",
    }
}

/// Appends `  label value`, the value word-wrapped at 80 columns with a
/// hanging indent.
fn field(out: &mut String, label: &str, value: &str) {
    const INDENT: usize = 15;
    const WIDTH: usize = 80;
    let mut line = format!("  {label:<w$}", w = INDENT - 2);
    let mut empty = true;
    for word in value.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(out, "{line}");
            line = " ".repeat(INDENT);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

/// Appends an aligned table, indented by four spaces; the last column is
/// not padded.
fn table<const N: usize>(out: &mut String, header: [&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: [&str; N]| {
        let mut text = String::from("   ");
        for (k, cell) in cells.iter().enumerate() {
            text.push(' ');
            if k + 1 == N {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:<w$} ", w = widths[k]);
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(header);
    for row in rows {
        line(row.each_ref().map(String::as_str));
    }
}
