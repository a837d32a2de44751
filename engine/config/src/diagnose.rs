//! Turns toml/serde errors into one-line [`ConfigError`]s.
//!
//! Reads: a `toml::de::Error` (message and byte span) and the spanned
//! document tree (`toml::de::DeTable`). Writes: a `ConfigError` whose
//! message names the key, the table (`[[balls]] #2`) and, for unknown keys,
//! the allowed keys. Invariant: the location is the start of the span that
//! serde reported (the key for unknown keys, the value for wrong types, the
//! table header for missing keys).

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use crate::error::{ConfigError, ErrorKind, Source};
use crate::spec::{
    BallKindSpec, BlockKindSpec, ShapeKindSpec, WallKindSpec, BALL_COMMON_KEYS, BLOCK_COMMON_KEYS,
    SHAPE_COMMON_KEYS, WALL_COMMON_KEYS,
};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A human name for the table at `path`: `[run]`, `[[balls]] #2`,
/// `region of [[balls]] #2`, `balls #3 of [[balls]] #1`.
pub(crate) fn describe_table(path: &[Seg]) -> String {
    let Some(Seg::Key(section)) = path.first() else {
        return "the top-level table".to_owned();
    };
    let (base, rest) = match path.get(1) {
        Some(Seg::Index(i)) => (format!("[[{section}]] #{}", i + 1), &path[2..]),
        _ => (format!("[{section}]"), &path[1..]),
    };
    let mut names: Vec<String> = Vec::new();
    for seg in rest {
        match seg {
            Seg::Key(k) => names.push(k.clone()),
            Seg::Index(i) => match names.last_mut() {
                Some(last) if !last.contains('#') => last.push_str(&format!(" #{}", i + 1)),
                _ => names.push(format!("#{}", i + 1)),
            },
        }
    }
    names.reverse();
    names.push(base);
    names.join(" of ")
}

/// The key path of the smallest key or value span that contains `offset`
/// (the deeper one on ties: an `[[array]]` and its first table share the
/// header span).
pub(crate) fn path_at(root: &DeTable<'_>, offset: usize) -> Vec<Seg> {
    let mut best: Option<(usize, Vec<Seg>)> = None;
    let mut path = Vec::new();
    visit_table(root, offset, &mut path, &mut best);
    best.map(|(_, p)| p).unwrap_or_default()
}

fn contains(span: &Range<usize>, offset: usize) -> bool {
    span.start <= offset && (offset < span.end || (span.is_empty() && offset == span.start))
}

fn consider(span: Range<usize>, offset: usize, path: &[Seg], best: &mut Option<(usize, Vec<Seg>)>) {
    if !contains(&span, offset) {
        return;
    }
    let len = span.len();
    let better = match best {
        None => true,
        Some((best_len, best_path)) => {
            len < *best_len || (len == *best_len && path.len() > best_path.len())
        }
    };
    if better {
        *best = Some((len, path.to_vec()));
    }
}

fn visit_table(
    table: &DeTable<'_>,
    offset: usize,
    path: &mut Vec<Seg>,
    best: &mut Option<(usize, Vec<Seg>)>,
) {
    for (key, value) in table.iter() {
        path.push(Seg::Key(key.get_ref().to_string()));
        consider(key.span(), offset, path, best);
        visit_value(value.get_ref(), value.span(), offset, path, best);
        path.pop();
    }
}

fn visit_value(
    value: &DeValue<'_>,
    span: Range<usize>,
    offset: usize,
    path: &mut Vec<Seg>,
    best: &mut Option<(usize, Vec<Seg>)>,
) {
    consider(span, offset, path, best);
    match value {
        DeValue::Table(t) => visit_table(t, offset, path, best),
        DeValue::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                visit_value(item.get_ref(), item.span(), offset, path, best);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Key names between backticks, in order: serde lists fields and variants
/// that way.
fn backticked(s: &str) -> Vec<&str> {
    s.split('`').skip(1).step_by(2).collect()
}

/// serde's wording for types -> ours.
fn plain(s: &str) -> String {
    match s {
        "a sequence" => "an array".to_owned(),
        "a map" => "a table".to_owned(),
        "sequence" => "an array".to_owned(),
        "map" => "a table".to_owned(),
        _ => s.to_owned(),
    }
}

/// Splits `path` into (key, table path) for an error about a value: trailing
/// array indices belong to the key's value.
fn key_and_table(path: &[Seg]) -> (Option<&str>, &[Seg]) {
    let mut end = path.len();
    while end > 0 && matches!(path[end - 1], Seg::Index(_)) {
        end -= 1;
    }
    match path[..end].last() {
        Some(Seg::Key(k)) => (Some(k.as_str()), &path[..end - 1]),
        _ => (None, &path[..end]),
    }
}

/// For a `[[balls]]`, `[[walls]]`, `[[shapes]]` or `[[blocks]]` table with
/// a valid `kind`, the kind and the keys that kind allows (the serde list
/// is the union over all kinds).
fn kind_keys<'a>(root: &'a DeTable<'_>, table: &[Seg]) -> Option<(String, Vec<&'static str>)> {
    let [Seg::Key(section), Seg::Index(i)] = table else {
        return None;
    };
    let entry = |t: &'a DeTable<'_>, key: &str| {
        t.iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v.get_ref())
    };
    let DeValue::Array(items) = entry(root, section)? else {
        return None;
    };
    let DeValue::Table(t) = items.get(*i)?.get_ref() else {
        return None;
    };
    let DeValue::String(kind) = entry(t, "kind")? else {
        return None;
    };
    let keys: Vec<&'static str> = match section.as_str() {
        "balls" => {
            let k = BallKindSpec::from_name(kind)?;
            BALL_COMMON_KEYS.iter().chain(k.keys()).copied().collect()
        }
        "walls" => {
            let k = WallKindSpec::from_name(kind)?;
            WALL_COMMON_KEYS.iter().chain(k.keys()).copied().collect()
        }
        "shapes" => {
            let k = ShapeKindSpec::from_name(kind)?;
            SHAPE_COMMON_KEYS.iter().chain(k.keys()).copied().collect()
        }
        "blocks" => {
            let k = BlockKindSpec::from_name(kind)?;
            BLOCK_COMMON_KEYS
                .iter()
                .chain(k.keys(&["blocks"]))
                .copied()
                .collect()
        }
        "clumps" => {
            let k = BlockKindSpec::from_name(kind)?;
            BLOCK_COMMON_KEYS
                .iter()
                .chain(k.keys(&["clumps"]))
                .copied()
                .collect()
        }
        _ => return None,
    };
    Some((kind.to_string(), keys))
}

/// A toml error that is not a syntax error, rewritten with the key path.
pub(crate) fn from_serde(
    src: &Source<'_>,
    root: &DeTable<'_>,
    err: &toml::de::Error,
) -> ConfigError {
    let message = err.message().trim();
    let span = err.span().unwrap_or(0..0);
    let path = path_at(root, span.start);

    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (name, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let table = match path.last() {
            Some(Seg::Key(k)) if k == name => &path[..path.len() - 1],
            _ => &path[..],
        };
        let (allowed, qualifier) = match kind_keys(root, table) {
            Some((kind, keys)) => (keys, format!(" for kind = \"{kind}\"")),
            None => (backticked(tail), String::new()),
        };
        let allowed = if allowed.is_empty() {
            "none".to_owned()
        } else {
            allowed.join(", ")
        };
        return src.err(
            ErrorKind::UnknownKey,
            &span,
            format!(
                "unknown key '{name}' in {}; allowed{qualifier}: {allowed}",
                describe_table(table)
            ),
        );
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        return src.err(
            ErrorKind::MissingKey,
            &span,
            format!("missing key '{name}' in {}", describe_table(&path)),
        );
    }

    let (key, table) = key_and_table(&path);
    let subject = match key {
        Some(k) => format!("'{k}' in {}", describe_table(table)),
        None => describe_table(table),
    };
    let split = |rest: &str| -> (String, String) {
        match rest.rsplit_once(", expected ") {
            Some((found, expected)) => (plain(found), plain(expected)),
            None => (plain(rest), String::new()),
        }
    };
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        let (found, expected) = split(rest);
        return src.err(
            ErrorKind::WrongType,
            &span,
            format!("wrong type for {subject}: expected {expected}, found {found}"),
        );
    }
    if let Some(rest) = message.strip_prefix("invalid value: ") {
        let (found, expected) = split(rest);
        return src.err(
            ErrorKind::WrongType,
            &span,
            format!("invalid value for {subject}: expected {expected}, found {found}"),
        );
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        let (n, expected) = split(rest);
        return src.err(
            ErrorKind::WrongType,
            &span,
            format!("wrong length for {subject}: expected {expected}, found {n} element(s)"),
        );
    }
    src.err(
        ErrorKind::InvalidValue,
        &span,
        format!("{subject}: {message}"),
    )
}

/// A TOML syntax error (the document could not be parsed at all).
pub(crate) fn from_syntax(src: &Source<'_>, err: &toml::de::Error) -> ConfigError {
    let span = err.span().unwrap_or(0..0);
    src.err(
        ErrorKind::Syntax,
        &span,
        format!("TOML syntax error: {}", err.message().trim()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Seg {
        Seg::Key(k.to_owned())
    }

    #[test]
    fn tables_are_named_innermost_first() {
        assert_eq!(describe_table(&[]), "the top-level table");
        assert_eq!(describe_table(&[key("run")]), "[run]");
        assert_eq!(
            describe_table(&[key("balls"), Seg::Index(1)]),
            "[[balls]] #2"
        );
        assert_eq!(
            describe_table(&[key("balls"), Seg::Index(0), key("region")]),
            "region of [[balls]] #1"
        );
        assert_eq!(
            describe_table(&[key("balls"), Seg::Index(0), key("balls"), Seg::Index(2)]),
            "balls #3 of [[balls]] #1"
        );
    }

    #[test]
    fn path_at_finds_keys_values_and_headers() {
        let text = "[run]\nsteps = 1\n[[balls]]\nkind = 1\n[[balls]]\nregion = { min = [0, 0] }\n";
        let root = DeTable::parse(text).unwrap();
        let root = root.get_ref();
        let at = |needle: &str| path_at(root, text.find(needle).unwrap());
        assert_eq!(at("steps"), vec![key("run"), key("steps")]);
        assert_eq!(at("1\n["), vec![key("run"), key("steps")]);
        assert_eq!(at("[[balls]]"), vec![key("balls"), Seg::Index(0)]);
        assert_eq!(
            at("0]"),
            vec![
                key("balls"),
                Seg::Index(1),
                key("region"),
                key("min"),
                Seg::Index(1)
            ]
        );
    }
}
