//! Human-readable model descriptions (for `talus plugins`).

use std::fmt::Write;

use talus_sdk::{inputs, Activity, Propagation, Swap};

use crate::error::range_text;
use crate::RegisteredModel;

/// A human-readable block describing a registered model: name, version,
/// plugin, the sdk it was built with, origin, summary, citation, a table of properties (unit, default
/// or "required", range, doc), the state columns with their units and
/// their propagation and swap rules, the activity rule and the optional
/// inputs the model reads.
pub fn describe(model: &RegisteredModel) -> String {
    let d = &model.entry.descriptor;
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = writeln!(out, "{} {}", d.name, d.version);
    let _ = writeln!(out, "  plugin:      {}", model.plugin);
    let _ = writeln!(out, "  sdk:         {}", model.sdk_version);
    // Not wrapped: a path must stay on one line to be copied.
    let _ = writeln!(out, "  origin:      {}", model.origin);
    if !d.summary.is_empty() {
        field(&mut out, "summary:", &d.summary);
    }
    if !d.citation.is_empty() {
        field(&mut out, "citation:", &d.citation);
    }
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

    if d.properties.is_empty() {
        let _ = writeln!(out, "  properties:  none");
    } else {
        let _ = writeln!(out, "  properties:");
        let rows: Vec<[String; 5]> = d
            .properties
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
            &mut out,
            ["name", "unit", "default", "range", "description"],
            &rows,
        );
    }

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
