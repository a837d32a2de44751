//! The value types of the raw config: numbers in a unit ([`Num`]), vectors
//! ([`Vec3`]), integers ([`Int`]), quaternions ([`QuatSpec`]) and the
//! values that take more than one form (`dt`, `radius`, `orientation`,
//! `properties`). Each says in its serde `expecting` text what it takes,
//! with the unit, so a wrong type reads "expected a number (m)".

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_spanned::Spanned;

/// A unit, for the "expected ..." wording of wrong-type errors.
pub(crate) trait Unit {
    /// The unit symbol, or `""` for dimensionless values.
    const SYMBOL: &'static str;
}

macro_rules! units {
    ($($name:ident = $symbol:literal),+ $(,)?) => {$(
        #[derive(Debug, Clone, Copy)]
        pub(crate) enum $name {}
        impl Unit for $name {
            const SYMBOL: &'static str = $symbol;
        }
    )+};
}

units! {
    Unitless = "",
    Meters = "m",
    Seconds = "s",
    KgPerM3 = "kg/m^3",
    MetersPerS = "m/s",
    MetersPerS2 = "m/s^2",
    RadPerS = "rad/s",
    Degrees = "degrees",
    PerS = "1/s",
    Newtons = "N",
    Pascals = "Pa",
    MetersPerSPerN = "(m/s)/N",
    PerPaS = "1/(Pa s)",
}

fn number_phrase<U: Unit>(f: &mut fmt::Formatter<'_>, article: &str, noun: &str) -> fmt::Result {
    if U::SYMBOL.is_empty() {
        write!(f, "{article}{noun}")
    } else {
        write!(f, "{article}{noun} ({})", U::SYMBOL)
    }
}

/// A finite number in unit `U`; TOML integers are accepted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Num<U>(pub f64, PhantomData<U>);

struct NumVisitor<U>(PhantomData<U>);

impl<'de, U: Unit> Visitor<'de> for NumVisitor<U> {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        number_phrase::<U>(f, "a ", "number")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }
    }
}

impl<'de, U: Unit> Deserialize<'de> for Num<U> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumVisitor::<U>(PhantomData))
            .map(|v| Num(v, PhantomData))
    }
}

/// Three finite numbers in unit `U`: `[x, y, z]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vec3<U>(pub [f64; 3], PhantomData<U>);

struct Vec3Visitor<U>(PhantomData<U>);

impl<'de, U: Unit> Visitor<'de> for Vec3Visitor<U> {
    type Value = [f64; 3];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        number_phrase::<U>(f, "an array of ", "3 numbers [x, y, z]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[f64; 3], A::Error> {
        let mut out = [0.0; 3];
        for (i, slot) in out.iter_mut().enumerate() {
            match seq.next_element::<Num<U>>()? {
                Some(n) => *slot = n.0,
                None => return Err(de::Error::invalid_length(i, &self)),
            }
        }
        let mut extra = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            extra += 1;
        }
        if extra > 0 {
            return Err(de::Error::invalid_length(3 + extra, &self));
        }
        Ok(out)
    }
}

impl<'de, U: Unit> Deserialize<'de> for Vec3<U> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(Vec3Visitor::<U>(PhantomData))
            .map(|v| Vec3(v, PhantomData))
    }
}

/// An integer (range checked in `validate`). A float with an integral value
/// such as `2e4` is accepted, since that is how large counts are often typed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Int(pub i64);

struct IntVisitor;

impl Visitor<'_> for IntVisitor {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        // 2^53: beyond it not every integer is a float.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if v.is_finite() && v.fract() == 0.0 && v.abs() <= EXACT {
            Ok(v as i64)
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }
    }
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntVisitor).map(Int)
    }
}

/// `dt`: `"auto"` or a number of seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum DtSpec {
    Auto,
    Fixed(f64),
}

impl<'de> Deserialize<'de> for DtSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DtSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"auto\" or a number (s)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DtSpec, E> {
                if v == "auto" {
                    Ok(DtSpec::Auto)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DtSpec, E> {
                Ok(DtSpec::Fixed(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DtSpec, E> {
                Ok(DtSpec::Fixed(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DtSpec, E> {
                if v.is_finite() {
                    Ok(DtSpec::Fixed(v))
                } else {
                    Err(E::invalid_value(de::Unexpected::Float(v), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `radius`: a number, or `[rmin, rmax]` for a uniform distribution.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RadiusSpec {
    Fixed(f64),
    Range(f64, f64),
}

impl<'de> Deserialize<'de> for RadiusSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RadiusSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number (m) or an array [rmin, rmax] (m)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RadiusSpec, E> {
                Ok(RadiusSpec::Fixed(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RadiusSpec, E> {
                Ok(RadiusSpec::Fixed(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RadiusSpec, E> {
                if v.is_finite() {
                    Ok(RadiusSpec::Fixed(v))
                } else {
                    Err(E::invalid_value(de::Unexpected::Float(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RadiusSpec, A::Error> {
                let lo = seq.next_element::<Num<Meters>>()?;
                let hi = seq.next_element::<Num<Meters>>()?;
                let mut n = usize::from(lo.is_some()) + usize::from(hi.is_some());
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                match (lo, hi) {
                    (Some(lo), Some(hi)) if n == 2 => Ok(RadiusSpec::Range(lo.0, hi.0)),
                    _ => Err(de::Error::invalid_length(n, &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A rotation as a quaternion `[w, x, y, z]` (checked to be of unit length
/// in `validate`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuatSpec(pub [f64; 4]);

const QUAT_EXPECTING: &str = "an array of 4 numbers [w, x, y, z] (a unit quaternion)";

impl<'de> Deserialize<'de> for QuatSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QuatSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(QUAT_EXPECTING)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<QuatSpec, A::Error> {
                quat_from_seq(seq, &self)
            }
        }
        d.deserialize_seq(V)
    }
}

fn quat_from_seq<'de, A: SeqAccess<'de>>(
    mut seq: A,
    expected: &dyn de::Expected,
) -> Result<QuatSpec, A::Error> {
    let mut out = [0.0; 4];
    let mut n = 0;
    while let Some(v) = seq.next_element::<Num<Unitless>>()? {
        if n < 4 {
            out[n] = v.0;
        }
        n += 1;
    }
    if n == 4 {
        Ok(QuatSpec(out))
    } else {
        Err(de::Error::invalid_length(n, expected))
    }
}

/// `orientation` of a block fill: `"random"` or a quaternion.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OrientationSpec {
    Random,
    Fixed(QuatSpec),
}

impl<'de> Deserialize<'de> for OrientationSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrientationSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "\"random\" or {QUAT_EXPECTING}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OrientationSpec, E> {
                if v == "random" {
                    Ok(OrientationSpec::Random)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<OrientationSpec, A::Error> {
                quat_from_seq(seq, &self).map(OrientationSpec::Fixed)
            }
        }
        d.deserialize_any(V)
    }
}

/// `properties`: a table of numbers, keys with their spans, in key order.
#[derive(Debug, Clone, Default)]
pub(crate) struct PropertiesSpec(pub Vec<(Spanned<String>, Spanned<Num<Unitless>>)>);

impl<'de> Deserialize<'de> for PropertiesSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PropertiesSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of numbers, e.g. { kn = 1e5, fric = 0.5 }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PropertiesSpec, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<Spanned<Num<Unitless>>>()?;
                    out.push((key, value));
                }
                Ok(PropertiesSpec(out))
            }
        }
        d.deserialize_map(V)
    }
}
